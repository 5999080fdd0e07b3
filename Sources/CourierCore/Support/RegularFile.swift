import Foundation

/// Checks that a body's file is one that can be sent: a readable regular file, after symlinks.
///
/// A directory as an upload hung URLSession until its timeout, and a FIFO or a device
/// (`/dev/zero`) has no length to send and may never end. `package` for the transports, which
/// check a `RequestBody.file` that did not come through an endpoint.
package enum RegularFile {
  /// Why `url` cannot be sent as a body, or `nil` when it can.
  package static func problem(at url: URL) -> String? {
    guard url.isFileURL else { return "\(url.absoluteString) is not a file URL" }
    let attributes = try? FileManager.default.attributesOfItem(
      atPath: url.resolvingSymlinksInPath().path)
    guard let type = attributes?[.type] as? FileAttributeType else {
      return "\(url.path) does not exist or cannot be read"
    }
    guard type == .typeRegular else {
      return "\(url.path) is not a readable regular file (\(type.rawValue))"
    }
    guard FileManager.default.isReadableFile(atPath: url.path) else {
      return "\(url.path) is not a readable regular file (no permission)"
    }
    return nil
  }
}
