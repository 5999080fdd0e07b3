// The types the spec names. The generator refers to them by name; they live in your own code.

/// The answer to `API.User.check(phone:)`.
struct PhoneCheck: Decodable, Sendable {
  let registered: Bool
  let accountID: Int?
}

/// The body of `API.User.register(registration:)`.
struct Registration: Encodable, Sendable {
  let phone: String
  let name: String
}

/// A new account.
struct Account: Decodable, Sendable {
  let accountID: Int
}

/// A user's profile.
struct Profile: Decodable, Sendable {
  let name: String
  let language: String
}
