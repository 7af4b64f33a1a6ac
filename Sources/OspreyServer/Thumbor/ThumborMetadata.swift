import Foundation
import Osprey

/// The JSON of thumbor's `meta/` URLs (thumbor's JSON engine): the source, the crops, resizes
/// and flips the job makes of it in order, the target size, and the focal points (none: Osprey
/// detects none). `{"thumbor": {"source": {…}, "operations": […], "target": {…}, "focal_points": []}}`.
struct ThumborMetadata: Encodable {
    struct Source: Encodable {
        var url: String
        var width: Int
        var height: Int
        var frameCount: Int
    }

    /// One operation: `crop` (left, top, right, bottom), `resize` (width, height),
    /// `flip_horizontally` or `flip_vertically`.
    struct Operation: Encodable, Equatable {
        var type: String
        var width: Int?
        var height: Int?
        var left: Int?
        var top: Int?
        var right: Int?
        var bottom: Int?
    }

    struct Size: Encodable {
        var width: Int
        var height: Int
    }

    struct Body: Encodable {
        var source: Source
        var operations: [Operation]
        var target: Size
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var focal_points: [Size] = []
    }

    var thumbor: Body

    /// The metadata of `processors` run on a `width` x `height` source of `frames` frames at `url`.
    init(url: URL, width: Int, height: Int, frames: Int, processors: [any ImageProcessing]) {
        let (operations, size) = Self.operations(processors, size: (width, height))
        thumbor = Body(
            source: Source(url: url.absoluteString, width: width, height: height, frameCount: frames), operations: operations,
            target: Size(width: size.width, height: size.height))
    }

    /// The JSON, wrapped in a call of `callback` (JSONP) when there is one.
    func encoded(callback: String?) -> Data {
        let json = (try? JSONEncoder().encode(self)) ?? Data("{}".utf8)
        guard let callback else { return json }
        return Data("\(callback)(".utf8) + json + Data(");".utf8)
    }

    /// The crops, resizes and flips `processors` make of an image of `size`, and the size they
    /// leave; other steps only change the size (``ResultSize``).
    static func operations(_ processors: [any ImageProcessing], size: (width: Int, height: Int)) -> ([Operation], (width: Int, height: Int)) {
        var size = size
        var operations: [Operation] = []
        func cropped(_ rect: (x: Int, y: Int, width: Int, height: Int)) {
            operations.append(Operation(type: "crop", left: rect.x, top: rect.y, right: rect.x + rect.width, bottom: rect.y + rect.height))
            size = (rect.width, rect.height)
        }
        for processor in processors {
            switch processor {
            case let composition as ImageProcessors.Composition:
                let (inner, after) = Self.operations(composition.processors, size: size)
                operations += inner
                size = after
            case let step as ResizeStep:
                var concrete = step.concrete(sourceWidth: size.width, sourceHeight: size.height)
                if step.flipHorizontally || step.flipVertically {
                    concrete.append(ImageProcessors.Flip(horizontal: step.flipHorizontally, vertical: step.flipVertically))
                }
                let (inner, after) = Self.operations(concrete, size: size)
                operations += inner
                size = after
            case let resize as ImageProcessors.Resize where resize.contentMode == .fill:
                // Scaled to cover the box, then its middle cut out.
                let scale = max(Double(resize.width) / Double(max(size.width, 1)), Double(resize.height) / Double(max(size.height, 1)))
                let covering = (
                    width: max(1, Int((Double(size.width) * scale).rounded())), height: max(1, Int((Double(size.height) * scale).rounded()))
                )
                if covering != size { operations.append(Operation(type: "resize", width: covering.width, height: covering.height)) }
                size = covering
                if let rect = ImageProcessors.Crop(width: resize.width, height: resize.height).rectangle(width: size.width, height: size.height),
                    rect.width < size.width || rect.height < size.height
                {
                    cropped(rect)
                }
            case let crop as ImageProcessors.Crop:
                if let rect = crop.rectangle(width: size.width, height: size.height) { cropped(rect) }
            case let crop as CropStep:
                cropped(crop.rectangle(width: size.width, height: size.height))
            case let flip as ImageProcessors.Flip:
                if flip.horizontal { operations.append(Operation(type: "flip_horizontally")) }
                if flip.vertical { operations.append(Operation(type: "flip_vertically")) }
            case is ImageProcessors.Resize, is ImageProcessors.Downsample, is ImageProcessors.SmartResize, is ProportionStep:
                let next = ResultSize.after(processor, size)
                if next != size { operations.append(Operation(type: "resize", width: next.width, height: next.height)) }
                size = next
            default:
                size = ResultSize.after(processor, size)
            }
        }
        return (operations, size)
    }
}
