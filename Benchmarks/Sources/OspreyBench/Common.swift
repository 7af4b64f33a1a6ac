import Foundation
import Osprey

/// A loader that answers every request in process with the same bytes (Nuke's benchmark shape
/// for the pipeline's own overhead), through the public ``DataLoading`` protocol alone.
struct InstantLoader: DataLoading {
    let data: Data
    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        answer(request)
    }
    private func answer(_ request: DownloadRequest) -> (response: DownloadResponse, body: DataChunks) {
        (
            response: DownloadResponse(statusCode: 200, headers: ["Content-Type": "image/png", "Content-Length": "\(data.count)"], url: request.url),
            body: DataChunks(data: data)
        )
    }
}

/// The smallest real image: a 1×1 RGBA PNG made by Osprey itself.
func tinyPNG() throws -> Data {
    try Image(rgba: [200, 100, 50, 255], width: 1, height: 1).encoded(as: .png)
}

/// Nuke's "empty decoder": hands back one prebuilt image without looking at the bytes (run on
/// the pipeline's processing queue, as every decoder is).
struct EmptyDecoder: ImageDecoding {
    let image: Image
    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image { image }
}

func tinyImage() throws -> Image {
    try Image(rgba: [200, 100, 50, 255], width: 1, height: 1)
}

/// A cache whose disk level lives in a fresh temporary directory.
func benchCache(_ name: String, memory: MemoryStorage.Config = .init(), serializer: any CacheSerializer = DefaultCacheSerializer()) -> ImageCache {
    ImageCache(
        name: name, memoryConfig: memory,
        diskConfig: DiskStorage.Config(name: name, directory: makeTempDir(name), cleansOnOpen: false),
        serializer: serializer)
}

/// Stores what the end-to-end job stores: the thumbnail as JPEG, quality 80.
struct ThumbnailJPEGSerializer: CacheSerializer {
    func data(with image: Image, original: Data?, processorIdentifier: String) throws(OspreyError) -> Data {
        try image.encoded(as: .jpeg, quality: 80)
    }
    func image(with data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        try ImageDecoder(options: options).decode(data)
    }
}
