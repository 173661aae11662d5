import LogbookDomain
import Testing

@Suite("Identifiers")
struct IdentifierTests {
    @Test(arguments: [
        "u1", "a", "A-Z_a-z_0-9", "550e8400-e29b-41d4-a716-446655440000", String(repeating: "x", count: 64),
    ])
    func accepts(_ raw: String) throws {
        #expect(try UserId(raw).rawValue == raw)
        #expect(try PostId(raw).description == raw)
        #expect(try ProductId(raw).rawValue == raw)
        #expect(try OrderId(raw).rawValue == raw)
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 65), "a b", " u1", "u1 ", "u.1", "u/1", "u@1", "ü", "u1\n", "é", "😀",
    ])
    func refuses(_ raw: String) {
        expectInvalidInput(field: "userId") { _ = try UserId(raw) }
        expectInvalidInput(field: "postId") { _ = try PostId(raw) }
        expectInvalidInput(field: "productId") { _ = try ProductId(raw) }
        expectInvalidInput(field: "orderId") { _ = try OrderId(raw) }
    }

    @Test func errorNamesTheFieldItArrivedIn() {
        expectInvalidInput(field: "authorId") { _ = try UserId("no spaces", field: "authorId") }
    }

    @Test func idsCompareByTheirText() throws {
        #expect(try UserId("a") < UserId("b"))
        #expect(try UserId("u1") == UserId("u1"))
        #expect(try UserId("U1") != UserId("u1"))
    }
}

@Suite("Person names")
struct PersonNameTests {
    @Test func trimsWhitespace() throws {
        #expect(try PersonName("  Ann Lee \t").value == "Ann Lee")
        #expect(try PersonName("Ann") == PersonName(" Ann "))
    }

    @Test func acceptsOneToHundredCharactersAfterTrimming() throws {
        #expect(try PersonName("A").value == "A")
        #expect(try PersonName(String(repeating: "a", count: 100)).value.count == 100)
        #expect(try PersonName("  " + String(repeating: "a", count: 100) + "  ").value.count == 100)
        // Characters, not bytes: 100 accented letters are 200 UTF-8 bytes.
        #expect(try PersonName(String(repeating: "é", count: 100)).value.count == 100)
    }

    @Test(arguments: ["", "   ", "\t\n", String(repeating: "a", count: 101), String(repeating: "é", count: 101)])
    func refusesEmptyOrLong(_ raw: String) {
        expectInvalidInput(field: "name") { _ = try PersonName(raw) }
    }

    @Test func refusesACharacterStackedWithMegabytesOfMarks() {
        let stacked = "a" + String(repeating: "\u{301}", count: 2_000)
        #expect(stacked.count == 1)
        expectInvalidInput(field: "name") { _ = try PersonName(stacked) }
        expectInvalidInput(field: "title") { _ = try PostTitle(stacked) }
        expectInvalidInput(field: "name") { _ = try ProductName(stacked) }
        expectInvalidInput(field: "content") { _ = try PostContent(String(repeating: stacked, count: 100)) }
        #expect(throws: Never.self) { _ = try PersonName(String(repeating: "😀", count: 100)) }
    }

    @Test(arguments: [
        "Ann\nLee", "Ann\tLee", "Ann\u{0}", "A\u{7F}B", "A\u{1B}[31mB", "Ann\rLee", "Ann\u{2028}Lee", "Ann\u{2029}Lee",
    ])
    func refusesControlCharacters(_ raw: String) {
        expectInvalidInput(field: "name") { _ = try PersonName(raw) }
    }
}

@Suite("Titles, product names and content")
struct TextTests {
    @Test func titleIsOneToTwoHundredCharactersAfterTrimming() throws {
        #expect(try PostTitle(" Hello ").value == "Hello")
        #expect(try PostTitle(String(repeating: "t", count: 200)).value.count == 200)
        expectInvalidInput(field: "title") { _ = try PostTitle(String(repeating: "t", count: 201)) }
        expectInvalidInput(field: "title") { _ = try PostTitle("") }
        expectInvalidInput(field: "title") { _ = try PostTitle("   ") }
        expectInvalidInput(field: "title") { _ = try PostTitle("two\nlines") }
    }

    @Test func productNameIsOneToTwoHundredCharactersAfterTrimming() throws {
        #expect(try ProductName(" Widget ").value == "Widget")
        #expect(try ProductName(String(repeating: "n", count: 200)).value.count == 200)
        expectInvalidInput(field: "name") { _ = try ProductName(String(repeating: "n", count: 201)) }
        expectInvalidInput(field: "name") { _ = try ProductName("") }
        expectInvalidInput(field: "name") { _ = try ProductName("tab\there") }
    }

    @Test func contentMayBeEmptyAndIsKeptExactly() throws {
        #expect(try PostContent("").value == "")
        #expect(try PostContent("  line one\nline two\t\n").value == "  line one\nline two\t\n")
    }

    @Test func contentIsAtMostFiftyThousandCharacters() throws {
        #expect(try PostContent(String(repeating: "c", count: 50_000)).value.count == 50_000)
        #expect(try PostContent(String(repeating: "é", count: 50_000)).value.count == 50_000)
        expectInvalidInput(field: "content") { _ = try PostContent(String(repeating: "c", count: 50_001)) }
    }
}

@Suite("Choices")
struct ChoiceTests {
    @Test func subscriptions() throws {
        #expect(Subscription.allCases.map(\.rawValue) == ["free", "premium", "enterprise"])
        #expect(try Subscription.parse("premium", field: "subscription") == .premium)
        #expect(!Subscription.free.canAccessPremiumFeatures)
        #expect(Subscription.premium.canAccessPremiumFeatures)
        #expect(Subscription.enterprise.canAccessPremiumFeatures)
    }

    @Test func genders() throws {
        #expect(Gender.allCases.map(\.rawValue) == ["male", "female", "other", "unknown"])
        for gender in Gender.allCases { #expect(try Gender.parse(gender.rawValue, field: "gender") == gender) }
    }

    @Test func categories() throws {
        #expect(ProductCategory.allCases.map(\.rawValue) == ["electronics", "clothing", "food"])
        for category in ProductCategory.allCases {
            #expect(try ProductCategory.parse(category.rawValue, field: "category") == category)
        }
    }

    @Test func orderStatusStartsPending() {
        #expect(OrderStatus.allCases == [.pending])
    }

    @Test(arguments: ["", "gold", "Premium", " free", "FREE"])
    func refusesOtherSubscriptions(_ raw: String) {
        expectInvalidInput(field: "subscription") { _ = try Subscription.parse(raw, field: "subscription") }
    }

    @Test(arguments: ["", "m", "Male", "none"])
    func refusesOtherGenders(_ raw: String) {
        expectInvalidInput(field: "gender") { _ = try Gender.parse(raw, field: "gender") }
    }

    @Test(arguments: ["", "books", "Food", "electronic"])
    func refusesOtherCategories(_ raw: String) {
        expectInvalidInput(field: "category") { _ = try ProductCategory.parse(raw, field: "category") }
    }

    @Test func refusalListsTheAllowedSpellings() {
        do {
            _ = try ProductCategory.parse("books", field: "category")
            Issue.record("accepted 'books'")
        } catch {
            #expect(error.message.contains("'electronics', 'clothing', 'food'"))
        }
    }
}
