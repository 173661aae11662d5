import LogbookDomain
import Testing

@Suite("Email addresses")
struct EmailAddressTests {
    @Test(arguments: [
        "ann@example.com", "Ann.Lee+tag@Example.CO.uk", "a@b.co", "o'neil@example.org", "x_y-z@sub-domain.example.io",
        "!#$%&'*+/=?^_`{|}~@example.com",
    ])
    func accepts(_ raw: String) throws {
        #expect(try EmailAddress(raw).value == raw)
    }

    @Test func trimsAndKeepsTheSpellingButNormalisesToLowerCase() throws {
        let address = try EmailAddress("  Ann.Lee@Example.COM \n")
        #expect(address.value == "Ann.Lee@Example.COM")
        #expect(address.description == "Ann.Lee@Example.COM")
        #expect(address.normalized.value == "ann.lee@example.com")
    }

    @Test func addressesDifferingOnlyInCaseHaveTheSameNormalisedForm() throws {
        #expect(try EmailAddress("ANN@EXAMPLE.COM").normalized == EmailAddress("ann@example.com").normalized)
        #expect(try EmailAddress("ANN@EXAMPLE.COM") != EmailAddress("ann@example.com"))
    }

    @Test(arguments: [
        "", "   ", "ann", "ann@", "@example.com", "ann@example", "ann@localhost", "ann@example.c", "ann@example.123",
        "ann@-example.com", "ann@example-.com", "ann@example..com", "ann@.example.com", "ann@example.com.",
        ".ann@example.com", "ann.@example.com", "a..b@example.com", "a b@example.com", "ann@exa mple.com",
        "ann@ex_ample.com", "a@b@example.com", "ann(x)@example.com", "jürgen@example.com", "ann@exämple.com",
        "ann@example.com\nbcc@example.com",
    ])
    func refuses(_ raw: String) {
        expectInvalidInput(field: "email", "\(raw.debugDescription)") { _ = try EmailAddress(raw) }
    }

    @Test func localPartIsAtMostSixtyFourCharacters() throws {
        #expect(try EmailAddress(String(repeating: "a", count: 64) + "@example.com").value.hasPrefix("aaa"))
        expectInvalidInput(field: "email") { _ = try EmailAddress(String(repeating: "a", count: 65) + "@example.com") }
    }

    @Test func domainLabelsAreAtMostSixtyThreeCharacters() throws {
        _ = try EmailAddress("a@" + String(repeating: "d", count: 63) + ".com")
        expectInvalidInput(field: "email") { _ = try EmailAddress("a@" + String(repeating: "d", count: 64) + ".com") }
    }

    @Test func wholeAddressIsAtMost254Characters() throws {
        // 64 + 1 + 63 + 1 + 63 + 1 + 61 = 254
        let local = String(repeating: "a", count: 64)
        let label = String(repeating: "d", count: 63)
        let fits = "\(local)@\(label).\(label).\(String(repeating: "e", count: 61))"
        #expect(fits.utf8.count == 254)
        _ = try EmailAddress(fits)
        expectInvalidInput(field: "email") { _ = try EmailAddress(fits + "e") }
    }

    @Test func errorNamesTheGivenField() {
        expectInvalidInput(field: "newEmail") { _ = try EmailAddress("nope", field: "newEmail") }
    }

    @Test func normalisedFormIsReadBackOnlyWhenLowerCase() throws {
        #expect(try NormalizedEmail(normalized: "ann@example.com").value == "ann@example.com")
        expectInvalidInput(field: "email") { _ = try NormalizedEmail(normalized: "Ann@example.com") }
        expectInvalidInput(field: "email") { _ = try NormalizedEmail(normalized: " ann@example.com") }
        expectInvalidInput(field: "email") { _ = try NormalizedEmail(normalized: "not an address") }
    }
}
