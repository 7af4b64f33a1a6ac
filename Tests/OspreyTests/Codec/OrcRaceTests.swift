import COspreyVips
import Foundation
import Testing

@testable import Osprey

@Suite("libvips' vector paths and liborc's code-memory race", .timeLimit(.minutes(3)))
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

    @Test("with liborc loaded, libvips reaches Osprey's serialised compile and free, so its vector paths stay on")
    func vectorPathsStayOnWhenSerialised() throws {
        Vips.ensureInitialised()
        let version = osprey_orc_version().map { String(cString: $0) }
        if let version {
            // The test executable links Osprey's C target as every Osprey program does.
            #expect(osprey_orc_serialised() == 1, "libvips' calls reach liborc \(version) directly")
            if ProcessInfo.processInfo.environment["VIPS_NOVECTOR"] == nil {
                #expect(osprey_vips_vectors_enabled() == 1, "liborc \(version) is loaded with the vector paths off")
            }
        }
        // Resizing works, to the same size, on either path.
        let image = try Image(data: TestData.data("rocket.jpg"))
        let resized = try ImageProcessors.Resize(width: 64, height: 64, contentMode: .fill).process(image)
        #expect(resized.width == 64 && resized.height == 64)
    }

    @Test("resizes on several threads at once, each compiling and freeing orc programs, all succeed")
    func concurrentResizes() async throws {
        Vips.ensureInitialised()
        let image = try Image(data: TestData.data("hopper.jpg"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for size in stride(from: 40 + worker, to: 120, by: 7) {
                        let resized = try ImageProcessors.Resize(width: size, height: size, contentMode: .fill).process(image)
                        #expect(resized.width == size && resized.height == size)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
