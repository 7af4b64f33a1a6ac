import Foundation

/// The repository's test images (`Tests/Fixtures/images`, see `Tests/Fixtures/SOURCES.md`): the one
/// locator every test target uses, found relative to this source file so that a fresh clone needs
/// nothing beside it.
public enum FixtureImages {
    /// `$OSPREY_TESTDATA` when set and not empty, else `Tests/Fixtures/images` of the repository this
    /// file was compiled from.
    public static var directory: URL {
        if let override = ProcessInfo.processInfo.environment["OSPREY_TESTDATA"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // OspreyTestSupport
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures/images", isDirectory: true)
    }

    /// The URL of the test image `name` (e.g. `"hopper.jpg"`); it is not checked to exist.
    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// The bytes of the test image `name`; throws Foundation's read error when it is missing.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// `Tests/Fixtures/formats`: the JPEG XL, SVG and PDF files the format tests compare with the
    /// reference tools (made with them, see `Tests/Fixtures/SOURCES.md`).
    public static var formatsDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/formats", isDirectory: true)
    }

    /// The bytes of `Tests/Fixtures/formats/<name>`.
    public static func formatData(_ name: String) throws -> Data { try Data(contentsOf: formatsDirectory.appendingPathComponent(name)) }

    /// The names of every file in ``directory`` except hidden ones, sorted; empty when it cannot be
    /// read.
    public static var allNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }
}
