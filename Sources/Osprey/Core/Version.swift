/// Osprey's version, also sent in the downloader's `User-Agent` header.
public let ospreyVersion = "0.1.0"
