// The mock APNs server.
