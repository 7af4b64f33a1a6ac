import Foundation

/// Everything `osprey serve` can be told. Every property states its default; the CLI maps each
/// to a flag and an environment variable (see `osprey serve --help`).
public struct ServerConfiguration: Sendable {
    /// Address to bind. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// Port to bind; `0` picks a free one. Default 8080.
    public var port = 8080
    /// thumbor's security key; `nil` serves only `unsafe/` URLs. Default `nil`.
    public var thumborKey: String?
    /// Length of imagor's HMAC-SHA256 signatures accepted besides thumbor's SHA-1 (`nil`: not
    /// accepted). Default `nil`.
    public var thumborSHA256Length: Int?
    /// imgproxy key/salt pairs (hex-decoded bytes); empty: imgproxy URLs are not signed. Default empty.
    public var imgproxyKeys: [ImgproxySigner.KeyPair] = []
    /// Length imgproxy signatures are truncated to (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 32 bytes =
    /// untruncated). Default 32.
    public var imgproxySignatureBytes = 32
    /// imgproxy presets, `name` → options (`rs:fill:300:300/q:80`). Default none.
    public var imgproxyPresets: [String: String] = [:]
    /// imgproxy's presets-only mode (`IMGPROXY_ONLY_PRESETS`): option segments are preset names,
    /// any other option is a 400 (see ``ImgproxyURLParser/onlyPresets``). Default `false`.
    public var imgproxyOnlyPresets = false
    /// The image imgproxy's `wm` option draws (imgproxy's `IMGPROXY_WATERMARK_URL`), fetched under
    /// the source rules; `nil`: `wm` draws nothing, as imgproxy without one. Default `nil`.
    public var imgproxyWatermark: URL?
    /// Serve `unsafe/` thumbor URLs (and unsigned imgproxy URLs) although keys are configured.
    /// Default `false`.
    public var allowUnsafe = false
    /// Allow sources resolving to loopback addresses (tests, local origins). Default `false`.
    public var allowLoopbackSources = false
    /// Allow sources resolving to private addresses (10/8, 172.16/12, 192.168/16, fc00::/7,
    /// CGNAT 100.64/10), for origins on an internal network; link-local stays refused (see
    /// ``SourceGuard/allowPrivate``). Default `false`.
    public var allowPrivateSources = false
    /// Allowed source hosts or URL prefixes (see ``SourceGuard/allowedSources``). Default: any public host.
    public var allowedSources: [String] = []
    /// Path prefix of the thumbor grammar. Default `""` (the root, as thumbor serves it).
    public var thumborPrefix = ""
    /// Path prefix of the imgproxy grammar. Default `/imgproxy`.
    public var imgproxyPrefix = "/imgproxy"
    /// Directory of the disk caches (originals and results); `nil`: memory only. Default `nil`.
    public var cacheDirectory: URL?
    /// Disk cache size limit in bytes, for each of originals and results. Default 1 GiB.
    public var diskCacheBytes = 1 << 30
    /// Memory cache of encoded results, in bytes. Default 256 MiB.
    public var memoryCacheBytes = 256 << 20
    /// Jobs processed at once, from the source's download to the encode. Default: twice the number
    /// of active cores (imgproxy's default), so jobs waiting for their origin do not leave cores
    /// idle; decodes and encodes still run on the pipeline's processing queue, one per core.
    public var workers = 2 * ProcessInfo.processInfo.activeProcessorCount
    /// Jobs allowed to wait for a worker; beyond it requests get 429. Default 64.
    public var queue = 64
    /// Largest source body in bytes, enforced while streaming. Default 50 MiB.
    public var maxSourceBytes = 50 << 20
    /// Largest source resolution, pixels summed over animation frames. Default 50,000,000.
    public var maxSourcePixels = 50_000_000
    /// Most animation frames an animated result keeps. A source with more is refused with 422
    /// when the output may be animated (GIF, WebP, or negotiated): from its header before any
    /// decode once it is cached, after decoding on its first request. A URL naming a still
    /// format (JPEG, PNG, AVIF) gets the first frame of any animation. Frames count towards
    /// ``maxSourcePixels``. Default 100.
    public var maxAnimationFrames = 100
    /// Largest result width or height. Default 8192.
    public var maxResultDimension = 8192
    /// Whole-download timeout. Default 10 s.
    public var downloadTimeout: Duration = .seconds(10)
    /// Whole-request deadline (queue, download, processing, encoding). Default 30 s.
    public var requestTimeout: Duration = .seconds(30)
    /// `max-age` of successful responses, in seconds. Default 31,536,000 (one year).
    public var maxAge = 31_536_000
    /// `max-age` of error responses, in seconds (`0`: `no-store`). Default 10.
    public var errorMaxAge = 10
    /// How long a cached original is used before it is revalidated with the origin (a conditional
    /// request with its ETag / Last-Modified: `304` keeps it, `200` replaces it), in seconds; the
    /// origin's `max-age` shortens it (see ``respectOriginCacheControl``). Results live no longer
    /// than their source stays fresh. Default 3600.
    public var originTTL = 3600
    /// Whether the origin's `Cache-Control` (`no-store`, `private`, `max-age`, `s-maxage`) limits
    /// how long results are cached and what answers say; off, ``maxAge`` and ``originTTL`` apply
    /// to every source. Default `true`.
    public var respectOriginCacheControl = true
    /// Default encoder quality. Default 80.
    public var quality = 80
    /// Graceful-shutdown deadline for in-flight requests. Default 10 s.
    public var shutdownTimeout: Duration = .seconds(10)
    /// How long SIGTERM drains before the graceful shutdown: `/health/ready` answers 503 while
    /// requests are still served, so a load balancer moves traffic away first. Default 0: none.
    public var drainTimeout: Duration = .zero
    /// The directory local sources are read from: imgproxy's `local:///path/in/root.jpg` and, in
    /// the thumbor grammar, image parts without a scheme (thumbor's file loader, `http(s)://` parts
    /// still fetched: `file_loader_http_fallback`). Paths leaving it are refused with 404. `nil`:
    /// no local sources (thumbor's bare parts are `http://` hosts). Default `nil`.
    public var localRoot: URL?
    /// thumbor's upload API (`POST /image`, `GET`/`HEAD /image/<id>`) under the thumbor prefix; the
    /// ids then work as thumbor image parts and as `upload:///<id>` imgproxy sources. Default `false`.
    public var upload = false
    /// Where uploads are stored (several instances may share it); `nil` with ``upload``: a
    /// `uploads` directory under ``cacheDirectory``, else under the temporary directory.
    /// Default `nil`.
    public var uploadDirectory: URL?
    /// The bucket (and key prefix) uploads are kept in instead of ``uploadDirectory``
    /// (`--upload-dir s3://BUCKET[/PREFIX]`, through ``s3``), shared by every instance without a
    /// shared volume. Default `nil`: a directory.
    public var uploadBucket: S3Path?
    /// Whether `PUT /image/<id>` replaces an upload (thumbor's `UPLOAD_PUT_ALLOWED`); else 405.
    /// Default `false`.
    public var uploadPut = false
    /// Whether `DELETE /image/<id>` removes an upload (thumbor's `UPLOAD_DELETE_ALLOWED`); else 405.
    /// Default `false`.
    public var uploadDelete = false

    /// The object store of `s3://` sources, the thumbor S3 loader and ``resultStore``; `nil`:
    /// `s3://` sources are refused (403). Default `nil`.
    public var s3: S3Configuration?
    /// The bucket thumbor image parts without a scheme are keys in (thumbor-aws's
    /// `TC_AWS_LOADER_BUCKET`), read through ``s3``; `nil`: they are hosts or local files.
    /// Default `nil`.
    public var thumborS3Bucket: String?
    /// The bucket (and key prefix) results are shared in by every instance: looked up before
    /// processing, written after (``ResultStore``), through ``s3``. Default `nil`: none.
    public var resultStore: S3Path?

    /// The upload directory in use: ``uploadDirectory``, else `uploads` under ``cacheDirectory`` or
    /// the temporary directory.
    public var resolvedUploadDirectory: URL {
        if let uploadDirectory { return uploadDirectory }
        if let cacheDirectory { return cacheDirectory.appendingPathComponent("uploads") }
        return FileManager.default.temporaryDirectory.appendingPathComponent("osprey-uploads")
    }

    /// The instance's name, sent as `X-Osprey-Instance` in every response. Default: the host name.
    public var instanceName = ProcessInfo.processInfo.hostName

    /// The defaults.
    public init() {}
}
