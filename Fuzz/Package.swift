// swift-tools-version:6.1
// libFuzzer targets for Osprey's hostile-input surfaces (the two URL grammars, the signature checks,
// the processing-spec parser). A separate package so the main package's build and CI are unaffected.
// Build and run them with `bash Fuzz/run.sh [seconds-per-target]` (Linux, sanitizers fuzzer+address).
import PackageDescription

// Each target defines LLVMFuzzerTestOneInput and libFuzzer supplies main, so no Swift entry point.
let fuzzFlags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "OspreyFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Osprey", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "FuzzThumborURL",
            dependencies: [.product(name: "OspreyServer", package: "Osprey")],
            swiftSettings: fuzzFlags
        ),
        .executableTarget(
            name: "FuzzImgproxyURL",
            dependencies: [.product(name: "OspreyServer", package: "Osprey")],
            swiftSettings: fuzzFlags
        ),
        .executableTarget(
            name: "FuzzSignature",
            dependencies: [.product(name: "OspreyServer", package: "Osprey")],
            swiftSettings: fuzzFlags
        ),
        .executableTarget(
            name: "FuzzProcessingSpec",
            dependencies: [.product(name: "Osprey", package: "Osprey")],
            swiftSettings: fuzzFlags
        ),
    ],
    swiftLanguageModes: [.v6]
)
