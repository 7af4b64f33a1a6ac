import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The SSRF guard: decides which source URLs the server may fetch.
///
/// A source passes when (1) the allow-list is empty or one of its entries matches it, and (2) every
/// address its host resolves to is public: not loopback (unless ``allowLoopback``), private
/// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), CGNAT (100.64/10),
/// unspecified, multicast, reserved or broadcast, and no IPv4 address hidden in an IPv6 form
/// (`::ffff:a.b.c.d`, `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) that would fail.
///
/// The check runs on the URL itself before the pipeline is asked, and again inside the loader for
/// every request it sends: each redirect hop, and watermark URLs, which go through the same loader
/// (``GuardedLoader``). For `http` the loader then connects to the checked address itself (pinned,
/// the `Host` header keeping the name). What remains: for `https` the HTTP client resolves the
/// host again when it connects (async-http-client 1.37 has no per-request resolver and does not
/// tell the address it connected to), so a DNS answer that changes between the check and the
/// connection (DNS rebinding with a zero TTL) is not caught there; deployments that need that
/// closed should also filter egress at the network level.
public struct SourceGuard: Sendable {
    /// Text in a refusal's reason that marks it (the downloader wraps errors from the loader).
    static let refusalMarker = "source address refused"

    /// Whether loopback addresses (127/8, ::1) are allowed, for tests and local origins. Default `false`.
    public var allowLoopback: Bool
    /// Whether private addresses (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT (100.64/10) are
    /// allowed, for origins on an internal network. Link-local (169.254/16, fe80::/10, where cloud
    /// metadata services answer), unspecified, multicast and reserved addresses stay refused.
    /// Default `false`.
    public var allowPrivate: Bool
    /// Allowed sources: host names (`example.com`), wildcard hosts (`*.example.com`: subdomains)
    /// or URL prefixes (`https://cdn.example.com/images/`: same scheme, host and port, path
    /// prefix). Matched on the parsed host, so `http://example.com@evil.com` is `evil.com`.
    /// `s3://bucket/` admits the objects of a bucket (`s3://bucket/prefix/`: keys under it).
    /// Default empty: any public host, any bucket.
    public var allowedSources: [String]

    /// Buckets (and prefixes) always allowed: where the server keeps uploads. Default none.
    var allowedObjects: [S3Path] = []

    /// A guard with `allowLoopback` (default `false`), `allowPrivate` (default `false`) and
    /// `allowedSources` (default: any).
    public init(allowLoopback: Bool = false, allowPrivate: Bool = false, allowedSources: [String] = []) {
        self.allowLoopback = allowLoopback
        self.allowPrivate = allowPrivate
        self.allowedSources = allowedSources
    }

    /// Throws 403 when `url` is not allowed or resolves to a refused address, 502 when its host
    /// does not resolve.
    public func check(_ url: URL) async throws(ServerError) {
        _ = try await checkedAddresses(url)
    }

    /// The addresses `url`'s host resolves to, each once, every one checked; throws as
    /// ``check(_:)``.
    func checkedAddresses(_ url: URL) async throws(ServerError) -> [IPAddress] {
        if let location = S3Location(internal: url) {
            // The object store is the operator's: only the bucket is checked, never an address.
            guard isAllowListed(url) else { throw .forbidden("source \(location) is not in the allowed sources") }
            return []
        }
        guard isAllowListed(url) else { throw .forbidden("source \(url.absoluteString) is not in the allowed sources") }
        guard let host = url.host, !host.isEmpty else { throw .badRequest("source \(url.absoluteString) has no host") }
        let addresses = await Self.resolve(host)
        guard !addresses.isEmpty else { throw ServerError(status: 502, reason: "cannot resolve the host of source \(url.absoluteString)") }
        for address in addresses {
            if let why = refusal(for: address) {
                throw .forbidden("\(Self.refusalMarker): \(url.absoluteString) resolves to \(address.text) (\(why))")
            }
        }
        // Each address once, in the resolver's order (it lists one per socket type and family).
        var seen = Set<IPAddress>()
        return addresses.filter { seen.insert($0).inserted }
    }

    /// Whether `url` matches the allow-list (always, when it is empty).
    /// Files (``LocalSource``) are not subject to it: they are checked against their root.
    public func isAllowListed(_ url: URL) -> Bool {
        guard !allowedSources.isEmpty, !LocalSource.isFile(url) else { return true }
        if S3Location.isInternal(url) { return isAllowListed(object: S3Location(internal: url)) }
        guard let host = url.host?.lowercased() else { return false }
        for entry in allowedSources.map({ $0.lowercased() }) {
            if entry.contains("://") {
                guard let prefix = URL(string: entry), let prefixHost = prefix.host?.lowercased() else { continue }
                guard prefix.scheme == url.scheme?.lowercased(), prefixHost == host, prefix.port == url.port else { continue }
                let path = prefix.path.isEmpty ? "/" : prefix.path
                let urlPath = url.path.isEmpty ? "/" : url.path
                if urlPath == path || urlPath.hasPrefix(path.hasSuffix("/") ? path : path + "/") { return true }
            } else if entry.hasPrefix("*.") {
                if host.hasSuffix(String(entry.dropFirst())) { return true }
            } else if host == entry {
                return true
            }
        }
        return false
    }

    /// Whether an `s3://` source is allowed: by an `s3://bucket/` entry (any key in the bucket) or
    /// an `s3://bucket/prefix` entry (keys under it, as URL prefixes match paths). Host entries
    /// never admit objects.
    private func isAllowListed(object location: S3Location?) -> Bool {
        guard let location else { return false }
        if allowedObjects.contains(where: { $0.bucket == location.bucket && location.key.hasPrefix($0.prefix) }) { return true }
        for entry in allowedSources where entry.prefix(5).lowercased() == "s3://" {
            let rest = entry.dropFirst(5)
            let bucket = rest.prefix { $0 != "/" }
            guard bucket == location.bucket else { continue }
            let prefix = rest.dropFirst(bucket.count + 1)
            if prefix.isEmpty || location.key.hasPrefix(prefix) { return true }
        }
        return false
    }

    /// Why `address` is refused, or `nil` when it is allowed.
    func refusal(for address: IPAddress) -> String? {
        switch address {
        case .v4(let b): return refusalV4(b)
        case .v6(let b):
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return allowLoopback ? nil : "loopback" }
            if b.allSatisfy({ $0 == 0 }) { return "unspecified" }
            if b[0] == 0xff { return "multicast" }
            if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return "link-local" }
            if b[0] & 0xfe == 0xfc { return allowPrivate ? nil : "private (unique local)" }
            let embedded: [UInt8]?
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff {
                embedded = Array(b[12..<16])
            } else if b[0..<12].allSatisfy({ $0 == 0 }) {
                embedded = Array(b[12..<16])
            } else if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4..<12].allSatisfy({ $0 == 0 }) {
                embedded = Array(b[12..<16])
            } else if b[0] == 0x20 && b[1] == 0x02 {
                embedded = Array(b[2..<6])
            } else {
                embedded = nil
            }
            if let embedded, let why = refusalV4(embedded) { return "IPv4 in IPv6: \(why)" }
            return nil
        }
    }

    private func refusalV4(_ b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (127, _): return allowLoopback ? nil : "loopback"
        case (0, _): return "unspecified"
        case (10, _), (172, 16...31), (192, 168): return allowPrivate ? nil : "private"
        case (100, 64...127): return allowPrivate ? nil : "CGNAT"
        case (169, 254): return "link-local"
        case (192, 0) where b[2] == 0: return "reserved"
        case (198, 18...19): return "reserved (benchmarking)"
        case (224...239, _): return "multicast"
        case (240...255, _): return "reserved or broadcast"
        default: return nil
        }
    }

    /// The addresses `host` resolves to (an IP literal is itself), through `getaddrinfo` off the
    /// cooperative pool.
    static func resolve(_ host: String) async -> [IPAddress] {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return await DispatchQueue.global().run { getaddrinfoAddresses(name) }
    }

    private static func getaddrinfoAddresses(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = info.pointee.ai_addr {
                if info.pointee.ai_family == AF_INET {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        let raw = $0.pointee.sin_addr.s_addr  // network byte order
                        result.append(.v4(withUnsafeBytes(of: raw) { Array($0) }))
                    }
                } else if info.pointee.ai_family == AF_INET6 {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        result.append(.v6(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }))
                    }
                }
            }
            cursor = info.pointee.ai_next
        }
        return result
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address, in network byte order.
enum IPAddress: Sendable, Hashable {
    case v4([UInt8])
    case v6([UInt8])

    /// The address as a URL host: dotted, or hex in brackets.
    var urlHost: String {
        switch self {
        case .v4: return text
        case .v6: return "[\(text)]"
        }
    }

    /// Dotted or hex text for reasons.
    var text: String {
        switch self {
        case .v4(let b): return b.map(String.init).joined(separator: ".")
        case .v6(let b):
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }.joined(separator: ":")
        }
    }
}
