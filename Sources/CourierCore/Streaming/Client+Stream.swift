extension Client {
  /// Sends the endpoint's request through the whole chain and returns as soon as the response
  /// head has passed it, with the body to be read while it arrives.
  ///
  /// Middleware see the head: retry and authentication act until it arrives, and not after
  /// the first chunk is yours. The pipeline's status check runs (a non-`2xx` answer is read
  /// into memory and fails as ``CourierError/Kind/httpStatus`` before any body is yielded);
  /// the envelope rule does not (the body is not in memory). A failure in mid-body is thrown
  /// by the body's iterator.
  ///
  /// ```swift
  /// let streamed = try await client.stream(Endpoint<Void>(.get, "export"))
  /// var bytes = 0
  /// for try await chunk in streamed.body { bytes += chunk.count }
  /// ```
  ///
  /// - Parameter bufferSize: The most bytes buffered ahead of the reader before the transfer
  ///   pauses; default ``ResponseBodyStream/defaultBufferSize``.
  /// - Throws: ``CourierError``, as ``send(_:)-(Endpoint<Value>)`` does before the body.
  public func stream<Value>(
    _ endpoint: Endpoint<Value>, bufferSize: Int = ResponseBodyStream.defaultBufferSize
  ) async throws(CourierError) -> StreamedResponse {
    var endpoint = endpoint.attribute(ResponseStreamAttribute.self, max(1, bufferSize))
    endpoint.overrides.envelope = .some(nil)
    let built = try request(for: endpoint)
    defer { built.body.temporaryFile?.remove() }
    return StreamedResponse(try await send(built))
  }

  /// Sends `request` through the middleware and the transport and returns as soon as the
  /// response head has passed them, whatever its status (no response pipeline runs here),
  /// with a `2xx` body to be read while it arrives.
  ///
  /// - Parameter bufferSize: The most bytes buffered ahead of the reader before the transfer
  ///   pauses; default ``ResponseBodyStream/defaultBufferSize``.
  public func stream(
    _ request: Request, bufferSize: Int = ResponseBodyStream.defaultBufferSize
  ) async throws(CourierError) -> StreamedResponse {
    var request = request
    request.attributes[ResponseStreamAttribute.self] = max(1, bufferSize)
    return StreamedResponse(try await send(request))
  }
}
