import Foundation

/// The scheme of a URL as the downloader sees it, read from the URL's string in place: `URL.scheme`
/// slices and copies the string and `URL.host` decodes it, which showed on every download.
enum URLScheme: Equatable {
    case http, https, file, data, other

    /// The scheme of `url` (ASCII case-insensitive), and whether an authority with a host follows
    /// `scheme://` (for `http` and `https`).
    static func parse(_ url: URL) -> (scheme: URLScheme, hasHost: Bool) {
        var string = url.absoluteString
        return string.withUTF8 { bytes in
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return (.other, false) }
            let scheme = scheme(bytes[..<colon])
            guard scheme == .http || scheme == .https else { return (scheme, false) }
            return (scheme, hasHost(bytes[(colon + 1)...]))
        }
    }

    private static func scheme(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> URLScheme {
        func named(_ candidate: StaticString) -> Bool {
            guard name.count == candidate.utf8CodeUnitCount else { return false }
            return zip(name, UnsafeBufferPointer(start: candidate.utf8Start, count: candidate.utf8CodeUnitCount))
                .allSatisfy { $0 | 0x20 == $1 }
        }
        if named("http") { return .http }
        if named("https") { return .https }
        if named("file") { return .file }
        if named("data") { return .data }
        return .other
    }

    /// Whether `rest` (after `scheme:`) is `//`, optional user information, then a host.
    private static func hasHost(_ rest: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard rest.count > 2, rest[rest.startIndex] == UInt8(ascii: "/"), rest[rest.startIndex + 1] == UInt8(ascii: "/") else {
            return false
        }
        let authority = rest[(rest.startIndex + 2)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let host = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority
        guard let first = host.first else { return false }
        return first != UInt8(ascii: ":")
    }
}
