import Foundation

/// Validation of a source URL's syntax, shared by both grammars.
enum SourceURL {
    /// The schemes of file sources (``LocalSource``).
    private static let fileSchemes = [LocalSource.localScheme, LocalSource.uploadScheme]

    /// `text` as an `http`/`https` URL with a host, a file source: `local:///path` (under the
    /// local root) or `upload:///<id>` (``LocalSource``, which checks the path when it is read),
    /// or an object: `s3://bucket/key` (as its internal URL, ``S3Location``); 400 otherwise, and
    /// for an `http(s)` URL naming the internal host of `s3://` sources.
    static func parse(_ text: String) throws(ServerError) -> URL {
        let head = text.prefix(7).lowercased()
        if head.hasPrefix("s3://") { return try S3Location.parse(text).url }
        if head.hasPrefix("s3%3a"), let decoded = text.removingPercentEncoding { return try S3Location.parse(decoded).url }
        // Only the scheme's length is lowercased (an inline small string): every request, memory
        // hits included, parses its source here.
        for scheme in fileSchemes where text.prefix(scheme.count + 3).lowercased() == scheme + "://" {
            let path = String(text.dropFirst(scheme.count + 3))
            return LocalSource.url(path: path.hasPrefix("/") ? path : "/" + path, scheme: scheme)
        }
        // As received first; then percent-decoded, for clients that encoded the authority too
        // (`%5B::1%5D` for an IPv6 literal).
        let candidates = [text] + (text.removingPercentEncoding.map { [$0] } ?? [])
        let parsed = candidates.lazy.compactMap { candidate -> URL? in
            let encoded = candidate.addingPercentEncoding(withAllowedCharacters: .urlAllowedForSources) ?? candidate
            guard let url = URL(string: encoded), url.scheme != nil, let host = url.host, !host.isEmpty, !host.contains("%") else { return nil }
            return url
        }.first
        guard let url = parsed, let scheme = url.scheme?.lowercased() else {
            throw .badRequest("source \"\(text)\" is not a valid URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw .badRequest("source \"\(text)\" has scheme \(scheme); only http, https and s3 are served")
        }
        guard !S3Location.isInternal(url) else { throw .badRequest("source \"\(text)\" names a reserved host") }
        return url
    }
}

extension CharacterSet {
    /// Characters left as they are in a source URL: the URL syntax and `%` (already-encoded bytes).
    static let urlAllowedForSources: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.formUnion(.urlPathAllowed)
        set.insert(charactersIn: "%#[]@:")
        return set
    }()
}
