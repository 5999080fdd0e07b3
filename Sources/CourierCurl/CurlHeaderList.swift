internal import CCourierCurl
import CourierCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The request header lines (`CURLOPT_HTTPHEADER`) of one easy handle's transfers, kept from
/// one transfer to the next. Used only under the event loop's engine lock, like its handle.
///
/// The requests of one client mostly send the same lines in the same places (`User-Agent`,
/// `Accept`, `Accept-Encoding`), with a few that change (`traceparent`). Building each list
/// afresh costs two `malloc`s and two `free`s per line (`curl_slist_append` copies the line
/// into a node of its own). Here a line that the last transfer sent at the same place reuses that transfer's node after
/// one `strcmp`; other lines get new nodes, and the last list's nodes that were not reused are
/// freed when the new list is finished. A transfer whose headers are the very fields the last
/// list was built from (the same array storage, as every request of a client gets its
/// default headers when it has none of its own) takes that list as it is, without building.
///
/// Every node is libcurl's (made by `curl_slist_append`) and freed by `curl_slist_free_all`
/// one at a time, unlinked first; each node is in exactly one of the two arrays at any time.
///
/// The two arrays are not checked for exclusive access at run time (`@exclusivity(unchecked)`),
/// which saves a call into the runtime's access tracking per access. Safe because one thread at a time uses the list
/// (the engine lock), and no method calls out while it holds an access to either array.
final class CurlHeaderList {
  /// The list being built, or the one finished last, in order.
  @exclusivity(unchecked) private var nodes: [UnsafeMutablePointer<curl_slist>] = []
  /// The last list's nodes while a new list is built; `nil` where a node was taken over.
  @exclusivity(unchecked) private var previous: [UnsafeMutablePointer<curl_slist>?] = []

  /// The fields the finished list was built from, with what else went in (``finish(from:extras:)``);
  /// `nil` while a list is being built. Holding the array keeps its storage alive, so another
  /// array at the same address is this one.
  @exclusivity(unchecked) private var builtFrom: (fields: [HTTPHeaders.Field], extras: Int)?

  /// The finished list, when it was built from `fields` themselves (the same storage) with
  /// the same `extras`; `nil` otherwise, and for an empty list.
  func reusable(for fields: [HTTPHeaders.Field], extras: Int) -> UnsafeMutablePointer<curl_slist>? {
    guard let built = builtFrom, built.extras == extras, let first = nodes.first else {
      return nil
    }
    let same = built.fields.withUnsafeBufferPointer { old in
      fields.withUnsafeBufferPointer { new in
        old.baseAddress == new.baseAddress && old.count == new.count
      }
    }
    return same ? first : nil
  }

  /// Starts a new list; the last one's nodes stay available to ``append(_:)`` until ``finish(from:extras:)``.
  func begin() {
    builtFrom = nil
    // A build that never finished (its transfer failed to configure) leaves nodes behind.
    freeUnused()
    previous.append(contentsOf: nodes.lazy.map { Optional($0) })
    nodes.removeAll(keepingCapacity: true)
  }

  /// Appends `line` (copied unless the last list had the same line at this place); `false`
  /// when libcurl could not allocate a node.
  func append(_ line: UnsafePointer<CChar>) -> Bool {
    let index = nodes.count
    if index < previous.count, let node = previous[index], let data = node.pointee.data,
      strcmp(data, line) == 0
    {
      previous[index] = nil
      nodes.append(node)
      return true
    }
    guard let node = courier_curl_slist_append(nil, line) else { return false }
    nodes.append(node)
    return true
  }

  /// Links the new list, frees the last list's nodes it did not take over, and returns its
  /// head (`nil` when it has no line).
  func finish(from fields: [HTTPHeaders.Field], extras: Int) -> UnsafeMutablePointer<curl_slist>? {
    freeUnused()
    builtFrom = (fields, extras)
    for index in nodes.indices {
      nodes[index].pointee.next = index + 1 < nodes.count ? nodes[index + 1] : nil
    }
    return nodes.first
  }

  /// The lines of the list, in order (for tests).
  var lines: [String] {
    nodes.compactMap { $0.pointee.data.map { String(cString: $0) } }
  }

  private func freeUnused() {
    for case let node? in previous { Self.free(node) }
    previous.removeAll(keepingCapacity: true)
  }

  private static func free(_ node: UnsafeMutablePointer<curl_slist>) {
    node.pointee.next = nil
    courier_curl_slist_free_all(node)
  }

  deinit {
    freeUnused()
    for node in nodes { Self.free(node) }
  }
}
