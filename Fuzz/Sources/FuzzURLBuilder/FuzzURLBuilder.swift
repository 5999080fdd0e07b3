// libFuzzer target: path templates, path parameters and query items through
// `Endpoint.parameter/query` and `makeRequest`, which run URLBuilder and PercentEncoding.
//
// The input is up to five NUL-separated strings: template, parameter name, parameter value,
// query name, query value. Problems must be `invalidRequest` errors; a URL that is built must
// be http(s) with a host, and must give the query item (and a parameter in a fixed template)
// back exactly when percent-decoded.

import CourierCore
import Foundation

private let base = URL(string: "https://api.example.com/v1/")
private let encoder = JSONEncoder()

/// libFuzzer's entry point: runs one input of `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  var parts = bytes.split(separator: 0, maxSplits: 4, omittingEmptySubsequences: false)
    .map { String(decoding: $0, as: UTF8.self) }
  while parts.count < 5 { parts.append("") }
  let (template, name, value, queryName, queryValue) = (
    parts[0], parts[1], parts[2], parts[3], parts[4]
  )

  // The fuzzed template, with and without the parameter, and with the query.
  build(Endpoint<Data>(.get, template).query(queryName, queryValue), queryName, queryValue)
  build(
    Endpoint<Data>(.get, template).parameter(name, value).query(queryName, queryValue),
    queryName, queryValue)
  _ = try? Endpoint<Data>(.get, template).makeRequest(baseURL: nil, encoder: encoder)

  // A fixed template: the parameter value must come back as one whole segment.
  if let url = build(
    Endpoint<Data>(.get, "users/{id}/posts").parameter("id", value), nil, nil)
  {
    let segments = url.path(percentEncoded: true).split(separator: "/")
    guard segments.count == 4, segments[0] == "v1", segments[1] == "users",
      segments[3] == "posts", segments[2].removingPercentEncoding == value
    else {
      fatalError("parameter \(value.debugDescription) gave \(url.absoluteString.debugDescription)")
    }
  }
  return 0
}

@discardableResult
private func build(_ endpoint: Endpoint<Data>, _ queryName: String?, _ queryValue: String?) -> URL?
{
  let request: Request
  do {
    request = try endpoint.makeRequest(baseURL: base, encoder: encoder)
  } catch let error as CourierError {
    guard error.kind == .invalidRequest else { fatalError("unexpected \(error)") }
    return nil
  } catch {
    fatalError("not a CourierError: \(error)")
  }
  let url = request.url
  guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
    url.host != nil
  else {
    fatalError("built a URL that is not absolute http(s): \(url.absoluteString.debugDescription)")
  }
  if let queryName, let queryValue {
    guard let query = url.query(percentEncoded: true),
      let last = query.split(separator: "&", omittingEmptySubsequences: false).last
    else { fatalError("query item missing from \(url.absoluteString.debugDescription)") }
    let pair = last.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
    guard pair.count == 2, pair[0].removingPercentEncoding == queryName,
      pair[1].removingPercentEncoding == queryValue
    else {
      fatalError(
        "query \(queryName.debugDescription)=\(queryValue.debugDescription) gave"
          + " \(url.absoluteString.debugDescription)")
    }
  }
  return url
}
