// swift-tools-version:6.1
// Osprey's benchmark suite: a separate package so the main package's build and CI stay lean.
// Run it with `bash Benchmarks/run.sh` from the repository root (release build).
import PackageDescription

let package = Package(
    name: "OspreyBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Osprey", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.26.0")
    ],
    targets: [
        // libvips itself, to set its concurrency for the in-process limit (scenario 6).
        .systemLibrary(name: "CVipsBench", pkgConfig: "vips"),
        // An animated image playing on an OspreyPicture: frame delays kept (frame clock), CPU per
        // second, peak RSS, bounded frame buffer against every frame. `bash Benchmarks/playback.sh`.
        .executableTarget(
            name: "AnimationPlaybackBench",
            dependencies: [
                .product(name: "Osprey", package: "Osprey"),
                .product(name: "OspreyGTK", package: "Osprey")
            ]
        ),
        // Scripted fast scrolling of a grid of images: frame times from the frame clock (Osprey,
        // solid-colour cells, naive decode in bind). `bash Benchmarks/gallery_scroll.sh`.
        .executableTarget(
            name: "GalleryScrollBench",
            dependencies: [
                .product(name: "Osprey", package: "Osprey"),
                .product(name: "OspreyGTK", package: "Osprey")
            ]
        ),
        // The offline gallery: an ImageGrid showing N disk-cached images offline against online
        // (issue 61). `bash Benchmarks/gallery_offline.sh`.
        .executableTarget(
            name: "GalleryOfflineBench",
            dependencies: [
                .product(name: "Osprey", package: "Osprey"),
                .product(name: "OspreyGTK", package: "Osprey"),
                .product(name: "OspreyTestSupport", package: "Osprey")
            ]
        ),
        .executableTarget(
            name: "OspreyBench",
            dependencies: [
                "CVipsBench",
                .product(name: "Osprey", package: "Osprey"),
                .product(name: "OspreyTestSupport", package: "Osprey"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
