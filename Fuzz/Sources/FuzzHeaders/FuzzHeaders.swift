// libFuzzer target: header names and values through HTTPHeaders.Name, add, set and
// init(received:). The input is lines of `name:value` (split at the first colon).
//
// Invalid names and values must throw `invalidRequest`; what is accepted must be a token name
// and a value with no control character but tab and no leading or trailing space or tab, and
// must be found again under any ASCII case of its name.

import CourierCore
import Foundation

/// libFuzzer's entry point: runs one input of `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  var pairs: [(String, String)] = []
  for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
    let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
    let name = String(decoding: line[..<colon], as: UTF8.self)
    let value = String(decoding: line[min(colon + 1, line.endIndex)...], as: UTF8.self)
    pairs.append((name, value))
  }

  var added = HTTPHeaders()
  var set = HTTPHeaders()
  for (name, value) in pairs {
    let checkedName: HTTPHeaders.Name?
    do {
      checkedName = try HTTPHeaders.Name(name)
    } catch {
      expectInvalidRequest(error)
      checkedName = nil
    }
    if let checkedName {
      guard isToken(checkedName.rawName), checkedName.rawName == name else {
        fatalError("accepted name \(name.debugDescription) is not a token")
      }
    }
    do {
      try added.add(name, value)
      guard checkedName != nil else { fatalError("add accepted name \(name.debugDescription)") }
      guard let last = added.values(for: try HTTPHeaders.Name(name)).last else {
        fatalError("added \(name.debugDescription) is not found")
      }
      checkValue(last, from: value)
      guard last.utf8.allSatisfy({ $0 < 0x80 }) else {
        fatalError("add accepted the non-ASCII value \(value.debugDescription)")
      }
      guard added[name.lowercased()] != nil, added[name.uppercased()] != nil else {
        fatalError("\(name.debugDescription) is not found ignoring case")
      }
    } catch {
      expectInvalidRequest(error)
    }
    do {
      try set.set(name, value)
      guard set.values(for: try HTTPHeaders.Name(name)).count == 1 else {
        fatalError("set left more than one value for \(name.debugDescription)")
      }
    } catch {
      expectInvalidRequest(error)
    }
  }

  let received = HTTPHeaders(received: pairs)
  for field in received {
    guard isToken(field.name.rawName) else { fatalError("received kept a bad name") }
    checkValue(field.value, from: nil)
  }
  _ = received.description
  _ = added == set
  _ = received.hashValue
  return 0
}

private func isToken(_ name: String) -> Bool {
  !name.isEmpty
    && name.utf8.allSatisfy { byte in
      (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
        || (byte >= 0x61 && byte <= 0x7A) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

/// A stored value: no control character but tab, no leading or trailing space or tab, and
/// (when `original` is known) the original with only that white space removed.
private func checkValue(_ value: String, from original: String?) {
  let utf8 = Array(value.utf8)
  for byte in utf8 where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
    fatalError("stored value \(value.debugDescription) holds control byte \(byte)")
  }
  let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
  if let first = utf8.first, isSpace(first) {
    fatalError("stored value \(value.debugDescription) starts with white space")
  }
  if let last = utf8.last, isSpace(last) {
    fatalError("stored value \(value.debugDescription) ends with white space")
  }
  if let original {
    let trimmed = Array(original.utf8).drop { isSpace($0) }.reversed().drop { isSpace($0) }
    guard Array(trimmed.reversed()) == utf8 else {
      fatalError("stored \(value.debugDescription) for \(original.debugDescription)")
    }
  }
}

private func expectInvalidRequest(_ error: any Error) {
  guard let error = error as? CourierError, error.kind == .invalidRequest else {
    fatalError("expected invalidRequest, got \(error)")
  }
}
