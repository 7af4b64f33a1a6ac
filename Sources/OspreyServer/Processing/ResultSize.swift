import Osprey

/// The size a processor chain makes of a source of a known size, worked out from the processors'
/// arguments before anything is decoded, so that a URL asking for an enormous result (a small
/// image enlarged to 16384 pixels a side, a huge canvas) is refused at once instead of after
/// seconds of work and gigabytes of pixels. Processors that do not change the size, or that
/// only make it smaller in ways not modelled here (trim), count as keeping it: the estimate is
/// an upper bound for those.
enum ResultSize {
    /// The largest width and height `processors` make, step by step, from a `width` x `height`
    /// source (the source's own size not counted); the source's size when there are none.
    static func largest(_ processors: [any ImageProcessing], width: Int, height: Int) -> (width: Int, height: Int) {
        var size = (width: width, height: height)
        var largest = processors.isEmpty ? size : (width: 0, height: 0)
        for processor in processors {
            size = after(processor, size)
            largest = (max(largest.width, size.width), max(largest.height, size.height))
        }
        return largest
    }

    /// Whether `processors` could make an image over `limit` pixels a side from some source:
    /// whether any of them sizes to a box, or a canvas, with a side over it. (A downsample never
    /// makes more than its source, which the source pixel limit bounds.)
    static func mayExceed(_ processors: [any ImageProcessing], limit: Int) -> Bool {
        processors.contains { processor in
            switch processor {
            // A least size scales the other side with it, by the source's aspect ratio.
            case let step as ResizeStep:
                Double(max(step.width, step.height)) * step.dpr * max(step.zoomX, step.zoomY) > Double(limit) || step.minWidth > 0
                    || step.minHeight > 0
            case let composition as ImageProcessors.Composition: mayExceed(composition.processors, limit: limit)
            case let resize as ImageProcessors.Resize: max(resize.width, resize.height) > limit
            case let smart as ImageProcessors.SmartResize: max(smart.width, smart.height) > limit
            case let pad as ImageProcessors.Pad: max(pad.width, pad.height) > limit
            case let backdrop as ImageProcessors.Backdrop: max(backdrop.width, backdrop.height) > limit
            case let padding as PaddingStep: max(padding.left + padding.right, padding.top + padding.bottom) > limit
            default: false
            }
        }
    }

    /// The size after one processor.
    static func after(_ processor: any ImageProcessing, _ size: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let (w, h) = (Double(max(size.width, 1)), Double(max(size.height, 1)))
        func scaled(_ scale: Double) -> (width: Int, height: Int) {
            (max(1, Int((w * scale).rounded())), max(1, Int((h * scale).rounded())))
        }
        switch processor {
        case let step as ResizeStep:
            return step.concrete(sourceWidth: size.width, sourceHeight: size.height).reduce(size) { after($1, $0) }
        case let composition as ImageProcessors.Composition:
            return composition.processors.reduce(size) { after($1, $0) }
        case let resize as ImageProcessors.Resize:
            switch resize.contentMode {
            case .fit: return scaled(min(Double(resize.width) / w, Double(resize.height) / h))
            case .fill, .stretch: return (resize.width, resize.height)
            }
        case let downsample as ImageProcessors.Downsample:
            return scaled(min(Double(downsample.width) / w, Double(downsample.height) / h, 1))
        case let smart as ImageProcessors.SmartResize:
            return (smart.width, smart.height)
        case let smart as ImageProcessors.SmartCrop:
            return (min(smart.width, size.width), min(smart.height, size.height))
        case let pad as ImageProcessors.Pad:
            return (max(pad.width, size.width), max(pad.height, size.height))
        case let backdrop as ImageProcessors.Backdrop:
            return (max(backdrop.width, size.width), max(backdrop.height, size.height))
        case let rotate as ImageProcessors.Rotate:
            return rotate.degrees % 180 == 0 ? size : (size.height, size.width)
        case let padding as PaddingStep:
            return (size.width + padding.left + padding.right, size.height + padding.top + padding.bottom)
        case let crop as ImageProcessors.Crop:
            return crop.rectangle(width: size.width, height: size.height).map { ($0.width, $0.height) } ?? size
        case let crop as CropStep:
            let rect = crop.rectangle(width: size.width, height: size.height)
            return (rect.width, rect.height)
        case let proportion as ProportionStep:
            return proportion.factor > 0 && proportion.factor < 1 ? scaled(proportion.factor) : size
        default:
            return size
        }
    }
}
