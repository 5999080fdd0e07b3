// Names the documentation's examples assume exist in the reader's code. Each generated
// snippet is the body of a function whose parameters supply the values (`client`, `base`,
// `server`, …), so examples compile as written.
import Courier
import CourierTesting
import Foundation

/// A user, as the examples decode it.
struct User: Codable, Sendable {
  let id: Int
  let name: String
}

/// A new user, as the examples send it.
struct NewUser: Codable, Sendable {
  let name: String
}

/// Stands in for CryptoKit's key in the signature example.
struct SymmetricKey: Sendable {}

/// Stands in for a signature check.
func verify(_ signature: String, _ body: Data, _ key: SymmetricKey) -> Bool { !signature.isEmpty }

/// A response stage the pipeline example lists.
struct SignatureStage: ResponseStage {
  let key: SymmetricKey
  func process(_ context: inout ResponseContext) throws {}
}

/// UI hooks the error example calls.
func showAlert(_ text: String) {}
func signOut() {}

/// The metrics sink the observability examples install.
let mySink = InMemoryMetricsSink()

/// The tracer the observability examples install.
let myTracer = InMemoryTracer()

/// A metrics sink of the reader's own, as an example names it.
typealias MyMetricsSink = InMemoryMetricsSink

/// The swift-metrics adapter of the Adapters article, as other examples name it.
typealias SwiftMetricsSink = InMemoryMetricsSink

/// An observer of the reader's own, as an example installs it.
struct AuditObserver: ClientObserver {}

/// The service's own work, which the shutdown example runs until SIGTERM.
func serve(using client: Client) async throws {}
