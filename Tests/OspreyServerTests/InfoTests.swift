import Foundation
import Osprey
import OspreyServer
import OspreyTestSupport
import Testing

/// `/info`: imgproxy's info URL shape (plain and base64) and thumbor's `/info/…`.
@Suite("Image info", .serialized, .timeLimit(.minutes(3)))
struct InfoTests {
    static func json(_ reply: ServerHarness.Reply) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any], "\(reply.text)")
    }

    @Test("format, sizes before and after EXIF orientation, frames, alpha, bytes, ETag, colour and hashes; cached like results")
    func info() async throws {
        let origin = try await LoopbackOrigin.start()
        let rotated = try TestImages.shared("hopper_orientation_6.jpg")
        origin.set("/rotated.jpg", body: rotated)
        origin.set("/alpha.png", body: TestImages.transparentPNG)
        origin.set("/anim.gif", body: try TestImages.shared("iss634.gif"), contentType: "image/gif")
        let server = try await ServerHarness.start()
        defer {
            Task {
                await server.stop()
                await origin.stop()
            }
        }
        let reply = try await server.get("/imgproxy/info/_/plain/\(origin.address("/rotated.jpg"))")
        #expect(reply.status == 200 && reply.header("content-type") == "application/json", "\(reply.text)")
        let info = try Self.json(reply)
        let header = try ImageDecoder().header(of: rotated)
        #expect(info["format"] as? String == "jpeg")
        #expect(info["width"] as? Int == header.width && info["height"] as? Int == header.height)
        #expect(info["upright_width"] as? Int == header.height && info["upright_height"] as? Int == header.width)
        #expect(info["orientation"] as? Int == 6)
        #expect(info["frames"] as? Int == 1 && info["has_alpha"] as? Bool == false)
        #expect(info["bytes"] as? Int == rotated.count)
        #expect((info["average_color"] as? String)?.wholeMatch(of: #/#[0-9a-f]{6}/#) != nil)
        _ = try ThumbHash(string: try #require(info["thumbhash"] as? String))
        _ = try BlurHash(string: try #require(info["blurhash"] as? String))
        #expect(try await server.get("/imgproxy/info/_/plain/\(origin.address("/rotated.jpg"))").body == reply.body)
        #expect(origin.hits("/rotated.jpg") == 1)
        let decodes = try await server.decodes()
        #expect(decodes == 0, "no full decode for info")

        let encoded = Data(origin.address("/alpha.png").utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let alpha = try Self.json(try await server.get("/imgproxy/info/_/\(encoded)"))
        #expect(alpha["has_alpha"] as? Bool == true && alpha["width"] as? Int == 200 && alpha["format"] as? String == "png")

        let animated = try Self.json(try await server.get("/info/unsafe/\(origin.address("/anim.gif"))"))
        #expect(animated["format"] as? String == "gif" && (animated["frames"] as? Int ?? 0) > 1)

        #expect(try await server.get("/info/unsafe/\(origin.address("/missing.jpg"))").status == 404)
        origin.set("/text.jpg", body: Data("not an image".utf8))
        #expect(try await server.get("/imgproxy/info/_/plain/\(origin.address("/text.jpg"))").status == 422)
    }
}
