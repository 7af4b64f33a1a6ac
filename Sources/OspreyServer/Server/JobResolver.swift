import Foundation

/// The job a request path asks for: by prefix, a thumbor or an imgproxy URL, parsed (signature
/// verified) and prepared (``PreparedJob``: allow-list, key); a path seen recently comes from
/// ``JobMemo`` instead, without parsing it again.
struct JobResolver: Sendable {
    let thumbor: ThumborURLParser
    let imgproxy: ImgproxyURLParser
    let thumborPrefix: String
    let imgproxyPrefix: String
    let sourceGuard: SourceGuard
    let memo: JobMemo
    /// The bucket uploads are kept in: `upload:///<id>` sources (and thumbor ids) read its objects.
    let uploads: S3Path?
    /// The clock for expiring URLs (imgproxy's `exp`), the imgproxy parser's own.
    var now: @Sendable () -> Date { imgproxy.now }

    init(
        thumbor: ThumborURLParser, imgproxy: ImgproxyURLParser, configuration: ServerConfiguration, sourceGuard: SourceGuard,
        uploads: S3Path? = nil, memo: JobMemo = JobMemo()
    ) {
        self.uploads = uploads
        self.thumbor = thumbor
        self.imgproxy = imgproxy
        thumborPrefix = configuration.thumborPrefix
        imgproxyPrefix = configuration.imgproxyPrefix
        self.sourceGuard = sourceGuard
        self.memo = memo
    }

    /// The job for `path` (the raw request path, percent-encoding kept) and `query`.
    func job(path: String, query: String?) throws(ServerError) -> PreparedJob {
        let key = JobMemo.key(path: path, query: query)
        if let job = memo.job(for: key, now: now) { return job }
        var parsed = try parse(path: path, query: query)
        if let uploads, parsed.source.scheme == LocalSource.uploadScheme {
            parsed.source = try uploads.location(parsed.source.lastPathComponent).url
        }
        let job = try PreparedJob(parsed, sourceGuard: sourceGuard)
        memo.store(job, for: key)
        return job
    }

    /// `PREFIX/info/…` (either grammar's prefix) is the `/info` of the URL that follows
    /// (``ImageJob/info``): imgproxy's `/info/SIGNATURE/OPTIONS/plain/SOURCE`, thumbor's
    /// `/info/unsafe/IMAGE` or `/info/SIGNATURE/IMAGE`, signed as the URL without `info/`.
    private func parse(path: String, query: String?) throws(ServerError) -> ImageJob {
        for prefix in [imgproxyPrefix, thumborPrefix] where path.hasPrefix(prefix + "/info/") && (prefix == thumborPrefix || !prefix.isEmpty) {
            var job = try parse(path: prefix + String(path.dropFirst(prefix.count + 5)), query: query)
            job.info = true
            return job
        }
        if !imgproxyPrefix.isEmpty, path.hasPrefix(imgproxyPrefix + "/") {
            return try imgproxy.parse(path: String(path.dropFirst(imgproxyPrefix.count)))
        }
        if path.hasPrefix(thumborPrefix + "/"), path.count > thumborPrefix.count + 1 {
            return try thumbor.parse(path: String(path.dropFirst(thumborPrefix.count + 1)), query: query)
        }
        throw .notFound("no image URL grammar is served at \(path)")
    }
}
