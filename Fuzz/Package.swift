// swift-tools-version:6.1
// libFuzzer targets for Osprey's hostile-input surfaces (the two URL grammars, the signature checks,
// the processing-spec parser, the image decoder on JPEG XL, SVG and PDF). A separate package so the
// main package's build and CI are unaffected.
// Build and run them with `bash Fuzz/run.sh [seconds-per-target]` (Linux, sanitizers fuzzer+address).
import PackageDescription

let package = Package(
    name: "OspreyFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Osprey", path: "..")
    ],
    targets: [
        // libFuzzer's driver, called from each target's main.swift.
        .target(name: "FuzzDriver"),
        // The file-source and s3:// containment checks the two URL targets share.
        .target(name: "FuzzFileSources", dependencies: [.product(name: "OspreyServer", package: "Osprey")]),
        .executableTarget(
            name: "FuzzThumborURL",
            dependencies: ["FuzzDriver", "FuzzFileSources", .product(name: "OspreyServer", package: "Osprey")]
        ),
        .executableTarget(
            name: "FuzzImgproxyURL",
            dependencies: ["FuzzDriver", "FuzzFileSources", .product(name: "OspreyServer", package: "Osprey")]
        ),
        .executableTarget(
            name: "FuzzSignature",
            dependencies: ["FuzzDriver", .product(name: "OspreyServer", package: "Osprey")]
        ),
        .executableTarget(
            name: "FuzzProcessingSpec",
            dependencies: ["FuzzDriver", .product(name: "Osprey", package: "Osprey")]
        ),
        .executableTarget(
            name: "FuzzImageDecoder",
            dependencies: ["FuzzDriver", .product(name: "Osprey", package: "Osprey")]
        )
    ],
    swiftLanguageModes: [.v6]
)
