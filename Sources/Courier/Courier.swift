// Courier: the umbrella module. `import Courier` brings in the core types, the middleware
// protocol, the response pipeline, the URLSession transport and reachability.

@_exported import CourierCore
@_exported import CourierReachability
@_exported import CourierURLSession
