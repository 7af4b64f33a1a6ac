// swift-tools-version:6.0
// Osprey: image downloading, processing and caching for Swift on Linux.
import PackageDescription

let package = Package(
    name: "Osprey",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Osprey", targets: ["Osprey"]),
        .library(name: "OspreyServer", targets: ["OspreyServer"]),
        .executable(name: "osprey", targets: ["OspreyCLI"]),
        // GTK 4 widgets as targets; a program depending on `Osprey` alone never needs GTK.
        .library(name: "OspreyGTK", targets: ["OspreyGTK"]),
        .executable(name: "osprey-gallery", targets: ["OspreyGallery"]),
        // Not API: the loopback origin and test-image locator the benchmark package shares with the tests.
        .library(name: "OspreyTestSupport", targets: ["OspreyTestSupport"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.26.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // `swift package generate-documentation` for the DocC catalog (Sources/Osprey/Osprey.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // multipart/form-data bodies of the server's upload API (`POST /image` with a `media` field).
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.0")
    ],
    targets: [
        // libvips, found through pkg-config (apt: libvips-dev, Homebrew: vips).
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"]), .brew(["vips"])]
        ),
        // Fixed-argument C wrappers around libvips' varargs calls, which Swift cannot call.
        // lcms2, libwebp and libjpeg (dependencies of libvips-dev) for cached colour transforms and for
        // encoding still WebP and JPEG images on the calling thread; gmodule to load libvips' modules
        // on first use.
        .target(
            name: "COspreyVips",
            dependencies: ["CVips"],
            linkerSettings: [.linkedLibrary("lcms2"), .linkedLibrary("webp"), .linkedLibrary("jpeg"), .linkedLibrary("gmodule-2.0")]
        ),
        .target(
            name: "Osprey",
            dependencies: [
                "COspreyVips",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio")
            ]
        ),
        // `osprey serve`: the pipeline behind HTTP (thumbor and imgproxy URL grammars). Kept apart so
        // that the Osprey library does not depend on Hummingbird.
        .target(
            name: "OspreyServer",
            dependencies: [
                "Osprey",
                "COspreyVips",
                .product(name: "Hummingbird", package: "hummingbird"),
                // The HTTP request and response parts Hummingbird's channel pipeline carries, and its URI
                // parser (MemoryHitHandler).
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "MultipartKit", package: "multipart-kit")
            ]
        ),
        // GTK 4, found through pkg-config (apt: libgtk-4-dev, Homebrew: gtk4).
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"]), .brew(["gtk4"])]
        ),
        .target(name: "OspreyGTK", dependencies: ["Osprey", "CGtk"]),
        // A scrolling grid of remote images, with a scripted mode for tests and screenshots.
        .executableTarget(
            name: "OspreyGallery",
            dependencies: ["OspreyGTK", "Osprey", "CGtk", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/osprey-gallery"
        ),
        .executableTarget(
            name: "OspreyCLI",
            dependencies: [
                "Osprey",
                "OspreyServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            path: "Sources/osprey"
        ),
        // zlib, for the CRC-32 of the test origin's damaged PNGs (Tests/OspreyTestSupport/Mutation.swift).
        .systemLibrary(name: "CZlib", path: "Tests/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // What the test targets and the counted benchmarks share: the test images' locator, the built
        // `osprey` binary's locator, a seeded generator, the loopback origin.
        .target(
            name: "OspreyTestSupport",
            dependencies: [
                "Osprey",
                "CZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio")
            ],
            path: "Tests/OspreyTestSupport"
        ),
        // `OspreyOrigin DIR...`: the loopback origin as a process, for scripts (scripts/gallery.sh).
        .executableTarget(name: "OspreyOrigin", dependencies: ["OspreyTestSupport"], path: "Tests/OspreyOrigin"),
        // The counted benchmarks (`scripts/bench-check.sh`): each scenario through the public API,
        // run under valgrind. Built with the tests (debug), so the check adds no build to CI.
        .executableTarget(
            name: "OspreyCounts",
            dependencies: [
                "Osprey",
                "OspreyServer",
                "OspreyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ],
            path: "Benchmarks/Counts"
        ),
        .testTarget(
            name: "OspreyTests",
            dependencies: [
                "Osprey",
                "OspreyTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // HTTPClientError and NIO's errors: what DataLoader resends after (DownloaderRecoveryTests).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio")
            ]
        ),
        // GTK targets under Xvfb (started by the tests when there is no display), asserting on pixels.
        .testTarget(
            name: "OspreyGTKTests",
            dependencies: ["OspreyGTK", "Osprey", "CGtk", "OspreyTestSupport"]
        ),
        .testTarget(
            name: "OspreyServerTests",
            dependencies: [
                "OspreyServer",
                "Osprey",
                "OspreyTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                // A raw HTTP/1.1 client for pipelined requests (MemoryHitHandlerTests).
                .product(name: "NIOPosix", package: "swift-nio")
            ],
            resources: [.copy("Fixtures")]
        )
    ],
    swiftLanguageModes: [.v6]
)
