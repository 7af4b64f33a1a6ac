import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// `osprey serve`: Osprey's pipeline behind HTTP, answering thumbor and imgproxy URLs.
///
/// ``run()`` binds, serves until SIGTERM or SIGINT, then shuts down gracefully: it stops
/// accepting, lets in-flight requests finish within ``ServerConfiguration/shutdownTimeout``, and
/// shuts the HTTP client down.
public struct OspreyServer: Sendable {
    /// The configuration.
    public let configuration: ServerConfiguration
    let service: ImageService
    let logger: Logger
    let drain = DrainState()

    /// A server with `configuration`, logging to `logger` (default: label `osprey.serve`). Sets
    /// the C allocator up first (glibc: two arenas, allocations of 8 MiB and more from the system),
    /// before the server's threads start.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "osprey.serve")) {
        Malloc.configure()
        self.configuration = configuration
        // Every request's logger gets a request id: kept unformatted until something is logged.
        var logger = logger
        logger.handler = DeferredMetadataLogHandler(wrapping: logger.handler)
        self.logger = logger
        service = ImageService(configuration: configuration, metrics: ServerMetrics(), logger: logger)
    }

    /// The Hummingbird application (for tests and embedding). `onServerRunning` receives the
    /// listening channel (its local address tells the port when ``ServerConfiguration/port`` is 0).
    public func makeApplication(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol & Service {
        let router = Router(context: OspreyRequestContext.self)
        router.add(middleware: InstanceHeaderMiddleware(name: configuration.instanceName))
        let jobs = JobResolver(
            thumbor: thumborParser, imgproxy: imgproxyParser, configuration: configuration, sourceGuard: service.sourceGuard,
            uploads: configuration.upload ? configuration.uploadBucket : nil)
        router.add(middleware: ImageMiddleware(service: service, jobs: jobs, configuration: configuration, uploads: uploadHandler))
        StatusRoutes.add(to: router, service: service, drain: drain)
        // Per connection: a watcher, so requests learn of a client going away without reading
        // the connection (it stays alive), and the memory hits answered on the event loop.
        let service = self.service, configuration = self.configuration
        let handlers: @Sendable () -> [any RemovableChannelHandler] = {
            [ConnectionWatcher(metrics: service.metrics), MemoryHitHandler(service: service, jobs: jobs, configuration: configuration)]
        }
        return Application(
            router: router, server: .http1(configuration: .init(additionalChannelHandlers: handlers())),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "osprey"),
            onServerRunning: onServerRunning, logger: logger)
    }

    /// Waits until the results and originals written so far are on disk.
    public func flushCaches() async {
        await service.results.flush()
        await service.resultStore?.flush()
        await service.pipeline.configuration.cache.diskStorage.waitForPendingWork()
    }

    var thumborParser: ThumborURLParser {
        var parser = ThumborURLParser(
            signer: configuration.thumborKey.map { ThumborSigner(key: $0, sha256Length: configuration.thumborSHA256Length) },
            allowUnsafe: configuration.allowUnsafe)
        parser.localFiles = configuration.localRoot != nil
        parser.uploads = configuration.upload
        if configuration.s3 != nil { parser.s3Bucket = configuration.thumborS3Bucket }
        return parser
    }

    /// The upload API's handler (``UploadHandler``), with ``ServerConfiguration/upload``; its
    /// directory is made when missing (a failure to make it is logged and leaves the API off).
    var uploadHandler: UploadHandler? {
        guard configuration.upload else { return nil }
        if let path = configuration.uploadBucket {
            guard let client = service.s3 else {
                logger.error("upload API off", metadata: ["reason": "--upload-dir s3:// needs the object store configured"])
                return nil
            }
            return UploadHandler(
                store: .bucket(BucketUploads(client: client, path: path)), configuration: configuration, service: service,
                base: configuration.thumborPrefix + "/image")
        }
        do throws(ServerError) {
            let store = try UploadStore(directory: configuration.resolvedUploadDirectory, logger: logger)
            return UploadHandler(
                store: .directory(store), configuration: configuration, service: service, base: configuration.thumborPrefix + "/image")
        } catch {
            logger.error("upload API off", metadata: ["reason": .string(error.reason)])
            return nil
        }
    }

    var imgproxyParser: ImgproxyURLParser {
        var parser = ImgproxyURLParser(
            signer: configuration.imgproxyKeys.isEmpty
                ? nil
                : ImgproxySigner(pairs: configuration.imgproxyKeys, signatureBytes: configuration.imgproxySignatureBytes),
            allowUnsigned: configuration.allowUnsafe, presets: configuration.imgproxyPresets, watermark: configuration.imgproxyWatermark)
        parser.onlyPresets = configuration.imgproxyOnlyPresets
        return parser
    }

    /// Serves until SIGTERM/SIGINT, then shuts down gracefully. `onListening` receives the bound
    /// port once the server accepts connections (default: does nothing). While serving, freed
    /// memory goes back to the system every ten seconds in which jobs finished, busy or idle.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let port = configuration.port
        try await makeServiceGroup(signals: [.sigterm, .sigint]) { channel in
            await onListening(channel.localAddress?.port ?? port)
        }.run()
    }

    /// The service group ``run()`` runs: the application, then the HTTP client's shutdown, with a
    /// graceful-shutdown deadline of ``ServerConfiguration/shutdownTimeout``. `signals` trigger
    /// the graceful shutdown (tests pass none and call `triggerGracefulShutdown()`); with a
    /// ``ServerConfiguration/drainTimeout``, SIGTERM first drains (``DrainService``).
    public func makeServiceGroup(signals: [UnixSignal], onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> ServiceGroup {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: ClientShutdownService(service: service)),
            .init(service: MemoryTrimService(limiter: service.limiter)),
            .init(service: makeApplication(onServerRunning: onServerRunning))
        ]
        var shutdownSignals = signals
        if self.configuration.drainTimeout > .zero, signals.contains(.sigterm) {
            shutdownSignals.removeAll { $0 == .sigterm }
            services.append(
                .init(
                    service: DrainService(state: drain, drain: self.configuration.drainTimeout),
                    successTerminationBehavior: .gracefullyShutdownGroup))
        }
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: shutdownSignals, logger: logger)
        configuration.maximumGracefulShutdownDuration = self.configuration.shutdownTimeout
        return ServiceGroup(configuration: configuration)
    }
}

/// Shuts the HTTP client down once the server has stopped (services stop in reverse order, so
/// this one, listed first, stops last).
struct ClientShutdownService: Service {
    let service: ImageService

    func run() async throws {
        try? await gracefulShutdown()
        await service.shutdown()
    }
}
