extension OspreyWrapper {
    /// Shows request `number`'s placeholder: an image at once (its conversion must be cheap, see
    /// ``ImageTarget``), nothing for `nil`; a hash clears the widget at once and is
    /// decoded at the widget's pixel size on a background queue, then shown if request `number`
    /// has shown nothing later by then.
    func showPlaceholder(_ placeholder: Placeholder?, number: UInt64) {
        let target = base
        switch placeholder {
        case nil:
            target.display(nil)
        case .image(let image):
            target.display(Base.makeContent(image))
            _ = target.ospreyController.mayShow(.placeholder, for: number)
        case .thumbHash, .blurHash:
            target.display(nil)
            guard let placeholder else { return }
            let size = target.ospreyPixelSize ?? (width: Placeholder.renderSide, height: Placeholder.renderSide)
            let width = min(size.width, Placeholder.maxSide)
            let height = min(size.height, Placeholder.maxSide)
            Task.detached { [weak target] in
                // Decoded and made into content off the main actor.
                guard let image = try? await placeholder.image(width: width, height: height),
                    let content = Base.makeContent(image)
                else { return }
                let widget = target
                await MainActor.run {
                    guard let target = widget, target.ospreyController.mayShow(.placeholder, for: number) else { return }
                    target.display(content)
                }
            }
        }
    }
}
