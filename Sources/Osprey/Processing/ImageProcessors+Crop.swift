import COspreyVips

extension ImageProcessors {
    /// Where a crop of a given size sits in the image.
    public enum Gravity: String, Sendable, Hashable, CaseIterable {
        /// Centred both ways (spec `center`).
        case center
        /// Top edge, centred horizontally.
        case top
        /// Bottom edge, centred horizontally.
        case bottom
        /// Left edge, centred vertically.
        case left
        /// Right edge, centred vertically.
        case right
        /// Top-left corner (spec `topleft`).
        case topLeft = "topleft"
        /// Top-right corner (spec `topright`).
        case topRight = "topright"
        /// Bottom-left corner (spec `bottomleft`).
        case bottomLeft = "bottomleft"
        /// Bottom-right corner (spec `bottomright`).
        case bottomRight = "bottomright"

        /// Where something placed by this gravity starts, given the space left over on each axis:
        /// 0, half of it or all of it.
        func origin(freeX: Int, freeY: Int) -> (x: Int, y: Int) {
            switch self {
            case .center: (freeX / 2, freeY / 2)
            case .top: (freeX / 2, 0)
            case .bottom: (freeX / 2, freeY)
            case .left: (0, freeY / 2)
            case .right: (freeX, freeY / 2)
            case .topLeft: (0, 0)
            case .topRight: (freeX, 0)
            case .bottomLeft: (0, freeY)
            case .bottomRight: (freeX, freeY)
            }
        }
    }

    /// Crops each frame, either to a rectangle or to a size placed by a ``ImageProcessors/Gravity``.
    ///
    /// The crop is clipped to the image, as Kingfisher's `CroppingImageProcessor` does; a crop that
    /// misses the image entirely is an `invalidArgument` error.
    /// Identifiers: `crop:WxH:gravity` or `crop:WxH:X:Y`. Keeps animation frames.
    package struct Crop: FrameProcessor {
        /// What to cut out.
        package enum Region: Sendable, Hashable {
            /// A rectangle: origin (`x`, `y`) from the top left, `width` x `height`.
            case rect(x: Int, y: Int, width: Int, height: Int)
            /// A `width` x `height` area placed by `gravity`.
            case size(width: Int, height: Int, gravity: Gravity)
        }

        /// The region to keep.
        package let region: Region

        /// A crop of `region`.
        package init(_ region: Region) {
            self.region = region
        }

        /// A `width` x `height` crop placed by `gravity` (default ``ImageProcessors/Gravity/center``).
        package init(width: Int, height: Int, gravity: Gravity = .center) {
            self.init(.size(width: width, height: height, gravity: gravity))
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String {
            switch region {
            case .rect(let x, let y, let width, let height): "crop:\(width)x\(height):\(x):\(y)"
            case .size(let width, let height, let gravity): "crop:\(width)x\(height):\(gravity.rawValue)"
            }
        }

        /// The rectangle this crop cuts from a `width` x `height` image, clipped to it: origin from
        /// the top left and size; `nil` when the crop misses the image.
        package func rectangle(width imageWidth: Int, height imageHeight: Int) -> (x: Int, y: Int, width: Int, height: Int)? {
            var (x, y, w, h): (Int, Int, Int, Int)
            switch region {
            case .rect(let rx, let ry, let rw, let rh):
                (x, y, w, h) = (rx, ry, rw, rh)
            case .size(let sw, let sh, let gravity):
                w = min(sw, imageWidth)
                h = min(sh, imageHeight)
                (x, y) = gravity.origin(freeX: imageWidth - w, freeY: imageHeight - h)
            }
            let left = max(0, x), top = max(0, y)
            let right = min(imageWidth, x + w), bottom = min(imageHeight, y + h)
            guard right > left, bottom > top else { return nil }
            return (left, top, right - left, bottom - top)
        }

        func validate(for image: Image) throws(OspreyError) {
            guard rectangle(width: image.width, height: image.height) != nil else {
                throw invalid("the crop does not overlap the \(image.width)x\(image.height) image")
            }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            guard let r = rectangle(width: frame.width, height: frame.height) else {
                throw VipsFailure(message: "the crop does not overlap the \(frame.width)x\(frame.height) image")
            }
            return try frame.apply { osprey_extract_area($0, Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height), &$1) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Crops each frame, either to a rectangle or to a size placed by a ``ImageProcessors/Gravity``.
    ///
    /// The crop is clipped to the image, as Kingfisher's `CroppingImageProcessor` does; a crop that
    /// misses the image entirely is an `invalidArgument` error.
    /// Identifiers: `crop:WxH:gravity` or `crop:WxH:X:Y`. Keeps animation frames.
    ///
    /// The processor to `width` x `height` placed by `gravity` (default `.center`).
    public static func crop(width: Int, height: Int, gravity: ImageProcessors.Gravity = .center) -> Self {
        Self([ImageProcessors.Crop(width: width, height: height, gravity: gravity)])
    }
}
