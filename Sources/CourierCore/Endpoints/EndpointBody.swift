import Foundation

/// The body of an ``Endpoint``, encoded when the request is built.
public struct EndpointBody: Sendable {
  private enum Storage: Sendable {
    case none
    case json(@Sendable (JSONEncoder) throws -> Data)
    case form([(String, String)])
    case data(Data, contentType: String)
    case file(URL, contentType: String)
    case multipart(MultipartForm)
    case stream(RequestBody, contentType: String)
  }

  private let storage: Storage

  /// No body.
  public static let none = EndpointBody(storage: .none)

  /// A JSON body, encoded with the endpoint's or client's `JSONEncoder`.
  public static func json(_ value: some Encodable & Sendable) -> EndpointBody {
    EndpointBody(storage: .json({ encoder in try encoder.encode(value) }))
  }

  /// An `application/x-www-form-urlencoded` body, fields in order.
  public static func form(_ fields: [(String, String)]) -> EndpointBody {
    EndpointBody(storage: .form(fields))
  }

  /// Raw bytes with a content type.
  public static func data(_ data: Data, contentType: String) -> EndpointBody {
    EndpointBody(storage: .data(data, contentType: contentType))
  }

  /// A file streamed from disk, with a content type.
  public static func file(_ url: URL, contentType: String) -> EndpointBody {
    EndpointBody(storage: .file(url, contentType: contentType))
  }

  /// A body read from a sequence while it is sent (`RequestBody.stream(length:_:)` or
  /// `RequestBody.stream(_:length:)`), with a content type. Any other `RequestBody` is sent
  /// as it is.
  public static func stream(_ body: RequestBody, contentType: String) -> EndpointBody {
    EndpointBody(storage: .stream(body, contentType: contentType))
  }

  /// A `multipart/form-data` body (RFC 7578), encoded when the request is built: in memory,
  /// or into a temporary file streamed from disk when the form has file-URL parts. The
  /// request gets the form's `Content-Type` (with its boundary) and exact `Content-Length`.
  public static func multipart(_ form: MultipartForm) -> EndpointBody {
    EndpointBody(storage: .multipart(form))
  }

  /// The request body, its content type and, when known here, its length; `nil` for no body.
  func encoded(
    with encoder: JSONEncoder
  ) throws -> (body: RequestBody, contentType: String?, contentLength: Int64?)? {
    switch storage {
    case .none:
      return nil
    case .multipart(let form):
      let encoded = try form.encoded()
      return (encoded.body, encoded.contentType, encoded.contentLength)
    case .json(let encode):
      do {
        return (.data(try encode(encoder)), "application/json", nil)
      } catch {
        throw CourierError(
          kind: .invalidRequest, debugMessage: "JSON body could not be encoded",
          underlying: error, stage: "request")
      }
    case .form(let fields):
      let text = fields.map {
        PercentEncoding.encode($0.0, keeping: .form) + "="
          + PercentEncoding.encode($0.1, keeping: .form)
      }.joined(separator: "&")
      return (.data(Data(text.utf8)), "application/x-www-form-urlencoded; charset=utf-8", nil)
    case .data(let data, let contentType):
      return (.data(data), contentType, nil)
    case .stream(let body, let contentType):
      return (body, contentType, nil)
    case .file(let url, let contentType):
      if let problem = RegularFile.problem(at: url) {
        throw CourierError(
          kind: .invalidRequest, debugMessage: "body file: \(problem)", stage: "request")
      }
      return (.file(url), contentType, nil)
    }
  }
}
