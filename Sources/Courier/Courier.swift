// Courier: the umbrella module. `import Courier` brings in the core types, the middleware
// protocol, the response pipeline, gzip, reachability, and the URLSession and libcurl
// transports, and Foundation itself: Courier's API is written in `URL`, `Data`, `JSONDecoder`
// and, for `URLSessionTransport`'s configuration, `URLSessionConfiguration`, so a file with
// only `import Courier` (as in the README's examples) compiles. On Linux `URLSession` and its
// configuration live in FoundationNetworking, which Foundation alone does not bring in.

@_exported import CourierCore
@_exported import CourierCurl
@_exported import CourierGzip
@_exported import CourierReachability
@_exported import CourierURLSession
@_exported import Foundation

#if canImport(FoundationNetworking)
  @_exported import FoundationNetworking
#endif
