/// A statement a connection prepares the first time it runs it and runs by name after that:
/// the server parses, analyses and plans it once per connection instead of at every call.
/// For statements run often, or costly to parse (views over the server's own functions);
/// the server may keep one generic plan for every parameter value, so a statement whose best
/// plan depends on its values stays a plain `String` query.
struct PostgresStatement: Sendable {
    let sql: String

    init(_ sql: String) { self.sql = sql }
}
