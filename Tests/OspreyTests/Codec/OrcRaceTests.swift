import COspreyVips
import Foundation
import Testing

@testable import Osprey

@Suite("libvips' vector paths and liborc's code-memory race", .timeLimit(.minutes(1)))
struct OrcRaceTests {
    @Test("liborc before 0.4.34 frees JIT code unlocked; later versions and unreadable ones do not count")
    func versions() {
        #expect(osprey_orc_frees_unlocked("0.4.33") == 1)
        #expect(osprey_orc_frees_unlocked("0.4.28") == 1)
        #expect(osprey_orc_frees_unlocked("0.3.99") == 1)
        #expect(osprey_orc_frees_unlocked("0.4.34") == 0)
        #expect(osprey_orc_frees_unlocked("0.4.41") == 0)
        #expect(osprey_orc_frees_unlocked("1.0.0") == 0)
        #expect(osprey_orc_frees_unlocked("garbage") == 0)
        #expect(osprey_orc_frees_unlocked(nil) == 0)
    }

    @Test("after Osprey starts libvips, its vector paths are off exactly when the loaded liborc has the race")
    func vectorPathsFollowTheLoadedOrc() throws {
        Vips.ensureInitialised()
        let version = osprey_orc_version().map { String(cString: $0) }
        let racy = version.map { osprey_orc_frees_unlocked($0) == 1 } ?? false
        if racy {
            #expect(osprey_vips_vectors_enabled() == 0, "liborc \(version ?? "?") is loaded with the vector paths on")
        }
        // Resizing still works either way, to the same size.
        let image = try Image(data: TestData.data("rocket.jpg"))
        let resized = try ImageProcessors.Resize(width: 64, height: 64, contentMode: .fill).process(image)
        #expect(resized.width == 64 && resized.height == 64)
    }
}
