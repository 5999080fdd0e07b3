/// Byte counts for people: `1 KiB`, `32 MiB`, `1500 bytes`.
enum ByteCount {
  static func describe(_ bytes: Int) -> String {
    let units = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
    for (size, unit) in units where bytes >= size && bytes % size == 0 {
      return "\(bytes / size) \(unit)"
    }
    return bytes == 1 ? "1 byte" : "\(bytes) bytes"
  }
}
