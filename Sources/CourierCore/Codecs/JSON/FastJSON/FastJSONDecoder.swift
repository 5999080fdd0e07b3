import Foundation
import Synchronization

/// Courier's fast path for `ResponseDecoding.json`: decodes `Decodable` values from a
/// ``FastJSONDocument`` with the same results as Foundation's `JSONDecoder` at its default
/// settings, in a fraction of its time (Docs/Benchmarks.md, `courier-bench envelope`).
///
/// It never decides anything `JSONDecoder` might decide differently. ``decode(_:from:like:)``
/// returns `nil` — and the caller decodes with `JSONDecoder`, whose value or error then
/// stands — when:
/// - the decoder is a subclass of `JSONDecoder`, or has any setting other than its default
///   (key, date, data and non-conforming float strategies, `userInfo`, JSON5, top-level
///   dictionary);
/// - the document is one ``FastJSONDocument`` does not take (see there);
/// - decoding asked for something this path leaves alone: `Float`, `Decimal`, `Data`, an
///   integer written with a fraction or an exponent, a number out of `Double`'s range, a key
///   of an object with two keys that hash the same (keys equal only after Unicode
///   normalisation hash the same), the keys of an object two of which have the same
///   `intValue`, a URL `URL(string:)` refuses;
/// - anything threw, even an error the type caught and recovered from (`try?`): the type
///   might have recovered differently from `JSONDecoder`'s error.
///
/// A model that asked for `Float`, `Decimal` or `Data` once goes straight to `JSONDecoder`
/// afterwards (``modelsLeftToFoundation``).
enum FastJSONDecoder {
  /// The decoded value, or `nil` when `JSONDecoder` must decide (see the type's notes).
  static func decode<Value: Decodable>(
    _ type: Value.Type, from data: Data, like decoder: JSONDecoder
  ) -> Value? {
    let model = ObjectIdentifier(Value.self)
    guard usesDefaults(decoder), !FastJSONState.isLeftToFoundation(Value.self),
      !modelsLeftToFoundation.withLock({ $0.contains(model) }),
      let document = FastJSONDocument(data)
    else { return nil }
    let state = FastJSONState(document)
    let value = try? state.decode(Value.self, node: 0, path: [])
    if state.metTypeLeftToFoundation {
      modelsLeftToFoundation.withLock { models in
        if models.count < maximumModelsRemembered { models.insert(model) }
      }
    }
    guard let value, !state.isTainted else { return nil }
    return value
  }

  /// Why a number in `data` did not convert to the type `Value` asks for there — its literal,
  /// its coding path and the type (`1.5 at "v" is not a whole number, which Int needs`) — or
  /// `nil` when no number was the problem or this path cannot tell. Run only after
  /// `JSONDecoder` failed: on Linux it reports such a number as "The given data was not
  /// valid JSON." at the root, which sends a reader looking for a syntax error.
  static func numberProblem<Value: Decodable>(
    _ type: Value.Type, from data: Data, like decoder: JSONDecoder
  ) -> String? {
    guard usesDefaults(decoder), let document = FastJSONDocument(data) else { return nil }
    let state = FastJSONState(document)
    _ = try? state.decode(Value.self, node: 0, path: [])
    return state.numberProblem
  }

  /// Models that asked for a type this path leaves to `JSONDecoder` (`Float`, `Decimal`,
  /// `Data`): they go straight to `JSONDecoder` from then on, instead of paying for a parse
  /// and a partial decoding first on every response. A cache, not a setting; bounded by
  /// ``maximumModelsRemembered``.
  static let modelsLeftToFoundation = Mutex<Set<ObjectIdentifier>>([])

  /// How many models ``modelsLeftToFoundation`` remembers at most.
  static let maximumModelsRemembered = 1_000

  /// Whether `decoder` is a plain `JSONDecoder` with every setting at its default. A subclass
  /// may decode its own way (an override of `decode(_:from:)` that unwraps an envelope, say),
  /// so only `JSONDecoder` itself is taken to decode as `JSONDecoder` does.
  static func usesDefaults(_ decoder: JSONDecoder) -> Bool {
    guard type(of: decoder) == JSONDecoder.self,
      case .useDefaultKeys = decoder.keyDecodingStrategy,
      case .deferredToDate = decoder.dateDecodingStrategy,
      case .base64 = decoder.dataDecodingStrategy,
      case .throw = decoder.nonConformingFloatDecodingStrategy
    else { return false }
    return decoder.userInfo.isEmpty && !decoder.allowsJSON5 && !decoder.assumesTopLevelDictionary
  }
}
