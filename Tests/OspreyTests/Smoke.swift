import Testing
import Foundation
@testable import Osprey

@Test func smokeDecodeAll() throws {
    for name in TestData.allImageNames {
        do {
            let image = try TestData.image(name)
            let header = try ImageDecoder().header(of: TestData.data(name))
            print(name, image.width, image.height, image.frameCount, image.format as Any, image.hasAlpha, image.orientation, header, image.frameDelays.prefix(3))
        } catch { print(name, "ERROR", error) }
    }
}
