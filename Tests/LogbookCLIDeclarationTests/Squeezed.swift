/// `text` with every run of spaces and newlines made one space, to find a phrase that help
/// may have wrapped.
func squeezed(_ text: String) -> String {
    text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
}
