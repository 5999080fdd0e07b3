import Foundation

extension CodingUserInfoKey {
  /// Any value under this key in a `JSONDecoder`'s `userInfo` makes Courier decode with
  /// that decoder alone, never with its fast decoding path (see
  /// ``ResponseDecoding/json(at:)``).
  ///
  /// ```swift
  /// let decoder = JSONDecoder()
  /// decoder.userInfo[.courierJSONDecoderOnly] = true
  /// let client = Client(baseURL: base, transport: CurlTransport(), decoder: decoder)
  /// ```
  public static let courierJSONDecoderOnly = CodingUserInfoKey(
    rawValue: "courier.jsonDecoderOnly")!
}
