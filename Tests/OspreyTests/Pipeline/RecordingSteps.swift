import Foundation
import Osprey

/// What a test records where a pipeline step ran: the step's name, with whatever the recorder
/// reads of the thread it runs on.
protocol StepRecorder: Sendable {
    func record(_ step: String)
}

/// A decoder that records "decode", then decodes as the default decoder does.
struct RecordingDecoder<Recorder: StepRecorder>: ImageDecoding {
    let trace: Recorder
    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        trace.record("decode")
        return try ImageDecoder().decode(data, options: options)
    }
}

/// A processor that records its `name` (default "process") and returns the image as it is.
struct RecordingProcessor<Recorder: StepRecorder>: ImageProcessing {
    var name = "process"
    let trace: Recorder
    var identifier: String { "record-\(name)" }
    func process(_ image: Image) throws(OspreyError) -> Image {
        trace.record(name)
        return image
    }
}
