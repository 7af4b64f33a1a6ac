import ArgumentParser
import Foundation
import Osprey
import OspreyServer

/// `osprey serve`: the pipeline as an image proxy server for thumbor and imgproxy URLs.
/// Thin: flags and environment variables become a ``ServerConfiguration``; the server lives in
/// the `OspreyServer` target.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve thumbor and imgproxy image URLs through Osprey's pipeline.",
        discussion: """
            thumbor URLs are served at the root (/unsafe/300x200/IMAGE, /SIGNATURE/300x200/IMAGE), \
            imgproxy URLs under --imgproxy-prefix (/imgproxy/SIGNATURE/rs:fill:300:200/plain/IMAGE). \
            GET /health and GET /metrics (Prometheus) are served too. Every option can also be given \
            by the environment variable in brackets; secrets may come from the environment or a file \
            (--thumbor-key-file) so that they stay off the command line. SIGTERM/SIGINT shut down \
            gracefully.
            """
    )

    @Option(help: "Address to bind [OSPREY_HOST] (default 127.0.0.1).")
    var host: String?
    @Option(help: "Port to bind, 0 for any free port [OSPREY_PORT] (default 8080).")
    var port: Int?
    @Option(help: "thumbor security key [OSPREY_THUMBOR_KEY] (default none: only /unsafe/ URLs).")
    var thumborKey: String?
    @Option(help: ArgumentHelp("File holding the thumbor key [OSPREY_THUMBOR_KEY_FILE].", valueName: "FILE"))
    var thumborKeyFile: String?
    @Option(help: "Also accept imagor's HMAC-SHA256 thumbor signatures of this many characters [OSPREY_THUMBOR_SHA256_LENGTH] (default off).")
    var thumborSha256Length: Int?
    @Option(help: "imgproxy key in hex; repeat or comma-separate for several [OSPREY_IMGPROXY_KEY] (default none: unsigned).")
    var imgproxyKey: [String] = []
    @Option(help: "imgproxy salt in hex, one per key [OSPREY_IMGPROXY_SALT].")
    var imgproxySalt: [String] = []
    @Option(help: "imgproxy signature size in bytes, 1...32 [OSPREY_IMGPROXY_SIGNATURE_SIZE] (default 32).")
    var imgproxySignatureSize: Int?
    @Option(
        help: ArgumentHelp(
            "imgproxy preset NAME=OPTIONS, e.g. thumb=rs:fill:100:100/q:70; repeatable [OSPREY_IMGPROXY_PRESETS, comma-separated].",
            valueName: "NAME=OPTIONS"))
    var imgproxyPreset: [String] = []
    @Option(
        help: "Image URL imgproxy's wm option draws, fetched under the source rules [OSPREY_IMGPROXY_WATERMARK_URL] (default none: wm draws nothing)."
    )
    var imgproxyWatermarkUrl: String?
    @Option(help: "Path prefix of imgproxy URLs [OSPREY_IMGPROXY_PREFIX] (default /imgproxy).")
    var imgproxyPrefix: String?
    @Option(help: "Path prefix of thumbor URLs [OSPREY_THUMBOR_PREFIX] (default: the root).")
    var thumborPrefix: String?
    @Flag(help: "Serve /unsafe/ and unsigned imgproxy URLs even when keys are set [OSPREY_ALLOW_UNSAFE=1].")
    var allowUnsafe = false
    @Flag(help: "Allow sources on loopback addresses, for tests and local origins [OSPREY_ALLOW_LOOPBACK_SOURCES=1] (default off).")
    var allowLoopbackSources = false
    @Flag(
        help:
            "Allow sources on private addresses (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10; link-local stays refused) [OSPREY_ALLOW_PRIVATE_SOURCES=1] (default off)."
    )
    var allowPrivateSources = false
    @Option(help: "Allowed source host, *.domain or URL prefix; repeatable or comma-separated [OSPREY_ALLOWED_SOURCES] (default: any public host).")
    var allowedSource: [String] = []
    @Option(help: ArgumentHelp("Directory of the disk caches [OSPREY_CACHE_DIR] (default: memory and a temporary directory).", valueName: "DIR"))
    var cacheDir: String?
    @Option(help: "Disk cache size in MiB, each for originals and results [OSPREY_DISK_CACHE_MB] (default 1024).")
    var diskCacheMb: Int?
    @Option(help: "Memory cache size in MiB [OSPREY_MEMORY_CACHE_MB] (default 256).")
    var memoryCacheMb: Int?
    @Option(help: "Jobs processed at once, downloads included [OSPREY_WORKERS] (default: 2 x number of cores).")
    var workers: Int?
    @Option(help: "Jobs waiting for a worker before 429 [OSPREY_QUEUE] (default 64).")
    var queue: Int?
    @Option(help: "Largest source in bytes [OSPREY_MAX_SOURCE_BYTES] (default 52428800).")
    var maxSourceBytes: Int?
    @Option(help: "Largest source resolution, pixels over all frames [OSPREY_MAX_SOURCE_PIXELS] (default 50000000).")
    var maxSourcePixels: Int?
    @Option(
        help:
            "Most frames of an animated result; a source with more gets 422 unless the URL names a still format (then its first frame) [OSPREY_MAX_ANIMATION_FRAMES] (default 100)."
    )
    var maxAnimationFrames: Int?
    @Option(help: "Largest result side in pixels [OSPREY_MAX_RESULT_DIMENSION] (default 8192).")
    var maxResultDimension: Int?
    @Option(help: "Download timeout in seconds [OSPREY_DOWNLOAD_TIMEOUT] (default 10).")
    var downloadTimeout: Double?
    @Option(help: "Whole-request deadline in seconds [OSPREY_REQUEST_TIMEOUT] (default 30).")
    var requestTimeout: Double?
    @Option(help: "Cache-Control max-age of results in seconds [OSPREY_MAX_AGE] (default 31536000).")
    var maxAge: Int?
    @Option(help: "Cache-Control max-age of errors in seconds, 0 for no-store [OSPREY_ERROR_MAX_AGE] (default 10).")
    var errorMaxAge: Int?
    @Option(
        help:
            "Seconds a cached original is used before it is revalidated with the origin (ETag/Last-Modified; 304 keeps it) [OSPREY_ORIGIN_TTL] (default 3600)."
    )
    var originTtl: Int?
    @Flag(
        help:
            "Ignore the origin's Cache-Control (no-store, private, max-age) and use --max-age/--origin-ttl for every source [OSPREY_IGNORE_ORIGIN_CACHE_CONTROL=1]."
    )
    var ignoreOriginCacheControl = false
    @Option(help: "Default output quality 1...100 [OSPREY_QUALITY] (default 80).")
    var quality: Int?
    @Option(
        help:
            "Seconds SIGTERM drains before shutting down: /health/ready answers 503 while requests are still served [OSPREY_DRAIN_SECONDS] (default 0)."
    )
    var drainSeconds: Double?
    @Option(help: "The instance's name, sent as X-Osprey-Instance [OSPREY_INSTANCE_NAME] (default: the host name).")
    var instanceName: String?
    @Option(
        help: ArgumentHelp(
            "Serve files under DIR: imgproxy local:///path sources, thumbor image parts without a scheme (http(s):// ones still fetched); paths leaving DIR are 404 [OSPREY_LOCAL_ROOT] (default: none).",
            valueName: "DIR"))
    var localRoot: String?
    @Flag(
        help:
            "thumbor's upload API: POST /image (body + Slug, or multipart field media) -> 201 + Location /image/<id>/<name>; GET/HEAD /image/<id>; ids usable as thumbor images and imgproxy upload:///<id> sources [OSPREY_UPLOAD=1] (default off)."
    )
    var upload = false
    @Option(
        help: ArgumentHelp(
            "Directory of uploads, shareable by several instances, or a bucket s3://BUCKET[/PREFIX] (through the --s3-* options) [OSPREY_UPLOAD_DIR] (default: uploads/ under --cache-dir, else a temporary directory).",
            valueName: "DIR"))
    var uploadDir: String?
    @Flag(help: "Allow PUT /image/<id> to replace an upload (else 405) [OSPREY_UPLOAD_PUT=1] (default off).")
    var uploadPut = false
    @Flag(help: "Allow DELETE /image/<id> to remove an upload (else 405) [OSPREY_UPLOAD_DELETE=1] (default off).")
    var uploadDelete = false
    @Flag(
        help:
            "imgproxy's presets-only mode: option segments are preset names, any other option is a 400 [OSPREY_IMGPROXY_ONLY_PRESETS=1] (default off)."
    )
    var imgproxyOnlyPresets = false
    @Flag(
        help:
            "Serve s3://bucket/key sources (imgproxy, plain or base64; thumbor s3:// parts) from the object store; limit buckets with --allowed-source s3://bucket/ [OSPREY_S3_SOURCES=1] (default off; on with any other --s3-* option, --thumbor-s3-bucket or --result-store)."
    )
    var s3Sources = false
    @Option(help: ArgumentHelp("S3-compatible endpoint [OSPREY_S3_ENDPOINT] (default: AWS's for --s3-region).", valueName: "URL"))
    var s3Endpoint: String?
    @Option(
        help:
            "Region requests are signed for [OSPREY_S3_REGION, else AWS_REGION, AWS_DEFAULT_REGION, AWS_PROFILE's region in ~/.aws/config or AWS_CONFIG_FILE] (default us-east-1)."
    )
    var s3Region: String?
    @Flag(
        help:
            "Path-style addressing (endpoint/bucket/key; MinIO, most S3-compatibles) [OSPREY_S3_PATH_STYLE=1] (default: virtual-host, bucket.endpoint/key)."
    )
    var s3PathStyle = false
    @Option(
        help: ArgumentHelp(
            "thumbor image parts without a scheme are keys in bucket NAME (thumbor-aws's TC_AWS_LOADER_BUCKET) [OSPREY_THUMBOR_S3_BUCKET] (default: none).",
            valueName: "NAME"))
    var thumborS3Bucket: String?
    @Option(
        help: ArgumentHelp(
            "Results shared by every instance in a bucket: looked up before processing, written after; the store down or slow only costs processing [OSPREY_RESULT_STORE] (default: none).",
            valueName: "s3://BUCKET[/PREFIX]"))
    var resultStore: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        func env(_ name: String) -> String? { environment["OSPREY_" + name].flatMap { $0.isEmpty ? nil : $0 } }
        func list(_ values: [String], _ name: String) -> [String] {
            (values.isEmpty ? (env(name).map { [$0] } ?? []) : values)
                .flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        func flag(_ value: Bool, _ name: String) -> Bool { value || ["1", "true", "yes"].contains(env(name)?.lowercased() ?? "") }

        var config = ServerConfiguration()
        config.host = host ?? env("HOST") ?? config.host
        config.port = port ?? env("PORT").flatMap(Int.init) ?? config.port
        var key = thumborKey ?? env("THUMBOR_KEY")
        if key == nil, let file = thumborKeyFile ?? env("THUMBOR_KEY_FILE") {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("cannot read the thumbor key file \(file)")
            }
            key = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        config.thumborKey = key
        config.thumborSHA256Length = thumborSha256Length ?? env("THUMBOR_SHA256_LENGTH").flatMap(Int.init)
        let keys = list(imgproxyKey, "IMGPROXY_KEY"), salts = list(imgproxySalt, "IMGPROXY_SALT")
        guard keys.count == salts.count else {
            throw ValidationError("--imgproxy-key and --imgproxy-salt must come in pairs (\(keys.count) keys, \(salts.count) salts)")
        }
        config.imgproxyKeys = try zip(keys, salts).map { key, salt in
            guard let pair = ImgproxySigner.KeyPair(hexKey: key, hexSalt: salt) else { throw ValidationError("imgproxy key and salt must be hex") }
            return pair
        }
        config.imgproxySignatureBytes = imgproxySignatureSize ?? env("IMGPROXY_SIGNATURE_SIZE").flatMap(Int.init) ?? 32
        for preset in list(imgproxyPreset, "IMGPROXY_PRESETS") {
            guard let equals = preset.firstIndex(of: "=") else { throw ValidationError("imgproxy preset \"\(preset)\" is not NAME=OPTIONS") }
            config.imgproxyPresets[String(preset[..<equals])] = String(preset[preset.index(after: equals)...])
        }
        if let text = imgproxyWatermarkUrl ?? env("IMGPROXY_WATERMARK_URL") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw ValidationError("imgproxy watermark URL \"\(text)\" is not an http or https URL")
            }
            config.imgproxyWatermark = url
        }
        config.imgproxyOnlyPresets = flag(imgproxyOnlyPresets, "IMGPROXY_ONLY_PRESETS")
        config.imgproxyPrefix = imgproxyPrefix ?? env("IMGPROXY_PREFIX") ?? config.imgproxyPrefix
        config.thumborPrefix = thumborPrefix ?? env("THUMBOR_PREFIX") ?? config.thumborPrefix
        if config.thumborPrefix == "/" { config.thumborPrefix = "" }
        config.allowUnsafe = flag(allowUnsafe, "ALLOW_UNSAFE")
        config.allowLoopbackSources = flag(allowLoopbackSources, "ALLOW_LOOPBACK_SOURCES")
        config.allowPrivateSources = flag(allowPrivateSources, "ALLOW_PRIVATE_SOURCES")
        config.allowedSources = list(allowedSource, "ALLOWED_SOURCES")
        config.cacheDirectory = (cacheDir ?? env("CACHE_DIR")).map { URL(fileURLWithPath: $0) }
        func int(_ value: Int?, _ name: String) -> Int? { value ?? env(name).flatMap(Int.init) }
        func seconds(_ value: Double?, _ name: String) -> Duration? {
            (value ?? env(name).flatMap(Double.init)).map { .milliseconds(Int($0 * 1000)) }
        }
        if let mb = int(diskCacheMb, "DISK_CACHE_MB") { config.diskCacheBytes = mb << 20 }
        if let mb = int(memoryCacheMb, "MEMORY_CACHE_MB") { config.memoryCacheBytes = mb << 20 }
        config.workers = int(workers, "WORKERS") ?? config.workers
        config.queue = int(queue, "QUEUE") ?? config.queue
        config.maxSourceBytes = int(maxSourceBytes, "MAX_SOURCE_BYTES") ?? config.maxSourceBytes
        config.maxSourcePixels = int(maxSourcePixels, "MAX_SOURCE_PIXELS") ?? config.maxSourcePixels
        config.maxAnimationFrames = int(maxAnimationFrames, "MAX_ANIMATION_FRAMES") ?? config.maxAnimationFrames
        config.maxResultDimension = int(maxResultDimension, "MAX_RESULT_DIMENSION") ?? config.maxResultDimension
        config.downloadTimeout = seconds(downloadTimeout, "DOWNLOAD_TIMEOUT") ?? config.downloadTimeout
        config.requestTimeout = seconds(requestTimeout, "REQUEST_TIMEOUT") ?? config.requestTimeout
        config.maxAge = int(maxAge, "MAX_AGE") ?? config.maxAge
        config.errorMaxAge = int(errorMaxAge, "ERROR_MAX_AGE") ?? config.errorMaxAge
        config.originTTL = int(originTtl, "ORIGIN_TTL") ?? config.originTTL
        config.quality = int(quality, "QUALITY") ?? config.quality
        config.drainTimeout = seconds(drainSeconds, "DRAIN_SECONDS") ?? config.drainTimeout
        config.instanceName = instanceName ?? env("INSTANCE_NAME") ?? config.instanceName
        config.respectOriginCacheControl = !flag(ignoreOriginCacheControl, "IGNORE_ORIGIN_CACHE_CONTROL")
        config.localRoot = (localRoot ?? env("LOCAL_ROOT")).map { URL(fileURLWithPath: $0) }
        if let root = config.localRoot {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--local-root \(root.path) is not a directory")
            }
        }
        config.upload = flag(upload, "UPLOAD")
        if let dir = uploadDir ?? env("UPLOAD_DIR") {
            if dir.lowercased().hasPrefix("s3://") {
                guard let path = S3Path(dir) else { throw ValidationError("--upload-dir \"\(dir)\" is not s3://BUCKET[/PREFIX]") }
                config.uploadBucket = path
            } else {
                config.uploadDirectory = URL(fileURLWithPath: dir)
            }
        }
        config.uploadPut = flag(uploadPut, "UPLOAD_PUT")
        config.uploadDelete = flag(uploadDelete, "UPLOAD_DELETE")
        try configureS3(&config, environment: environment, env: env, flag: flag)
        guard (1...100).contains(config.quality) else { throw ValidationError("--quality must be 1...100") }
        guard config.maxAnimationFrames > 0 else { throw ValidationError("--max-animation-frames must be > 0") }
        guard config.workers > 0, config.queue >= 0 else { throw ValidationError("--workers must be > 0 and --queue >= 0") }

        let server = OspreyServer(configuration: config)
        let host = config.host
        try await server.run { port in
            // Unbuffered, so that scripts waiting for this line see it at once.
            FileHandle.standardOutput.write(Data("osprey serve: listening on http://\(host):\(port)\n".utf8))
        }
    }

    /// The object-store options: ``ServerConfiguration/s3`` when any is given, credentials from
    /// the AWS environment variables or shared credentials file (none: anonymous), the region
    /// from the flag, else as the AWS SDKs find it (environment, shared config file).
    private func configureS3(
        _ config: inout ServerConfiguration, environment: [String: String], env: (String) -> String?, flag: (Bool, String) -> Bool
    ) throws {
        let bucket = thumborS3Bucket ?? env("THUMBOR_S3_BUCKET")
        let store = resultStore ?? env("RESULT_STORE")
        let endpoint = s3Endpoint ?? env("S3_ENDPOINT")
        let pathStyle = flag(s3PathStyle, "S3_PATH_STYLE")
        guard
            flag(s3Sources, "S3_SOURCES") || bucket != nil || store != nil || endpoint != nil || pathStyle || s3Region != nil
                || config.uploadBucket != nil
        else { return }
        var s3 = S3Configuration()
        if let endpoint {
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--s3-endpoint \"\(endpoint)\" is not an http or https URL")
            }
            s3.endpoint = url
        }
        s3.region = s3Region ?? env("S3_REGION") ?? S3Configuration.region(environment: environment) ?? s3.region
        s3.pathStyle = pathStyle
        s3.credentials = S3Configuration.credentials(environment: environment)
        config.s3 = s3
        config.thumborS3Bucket = bucket
        if let store {
            guard let path = S3Path(store) else { throw ValidationError("--result-store \"\(store)\" is not s3://BUCKET[/PREFIX]") }
            config.resultStore = path
        }
    }
}
