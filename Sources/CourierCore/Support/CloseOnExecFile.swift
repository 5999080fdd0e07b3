import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Opens files with `O_CLOEXEC`, so that a process the application starts (`posix_spawn`,
/// `Process`, `fork` + `exec`) does not inherit a download's partial file, a multipart part's
/// source or temporary file, or a file CourierTesting reads. Foundation's
/// `FileHandle(forWritingTo:)` and `FileHandle(forReadingFrom:)` open without it, and setting
/// `FD_CLOEXEC` afterwards races with another thread's spawn.
package enum CloseOnExecFile {
  /// Opens an existing file for writing.
  package static func forWriting(_ url: URL) throws -> FileHandle {
    try open(url, flags: O_WRONLY)
  }

  /// Opens an existing file for reading.
  package static func forReading(_ url: URL) throws -> FileHandle {
    try open(url, flags: O_RDONLY)
  }

  /// Creates a file that must not exist yet, readable and writable by its owner only, and
  /// opens it for writing.
  package static func create(_ url: URL) throws -> FileHandle {
    try open(url, flags: O_WRONLY | O_CREAT | O_EXCL)
  }

  private static func open(_ url: URL, flags: Int32) throws -> FileHandle {
    let descriptor = url.withUnsafeFileSystemRepresentation { path -> Int32 in
      guard let path else { return -1 }
      #if canImport(Glibc)
        return Glibc.open(path, flags | O_CLOEXEC, 0o600)
      #else
        return Darwin.open(path, flags | O_CLOEXEC, 0o600)
      #endif
    }
    guard descriptor >= 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
  }
}
