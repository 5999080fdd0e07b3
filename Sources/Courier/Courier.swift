// Courier: the umbrella module. `import Courier` brings in the core types, the middleware
// protocol, the response pipeline, gzip, reachability, and the URLSession and libcurl
// transports.

@_exported import CourierCore
@_exported import CourierCurl
@_exported import CourierGzip
@_exported import CourierReachability
@_exported import CourierURLSession
