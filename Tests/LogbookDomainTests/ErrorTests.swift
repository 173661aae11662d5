import LogbookDomain
import Testing

@Suite("Domain errors")
struct DomainErrorTests {
    @Test func everyErrorHasItsWireCode() {
        let cases: [(DomainError, String)] = [
            (.invalidInput(field: "price", reason: "r"), "invalid_input"),
            (.notFound(.user, id: "u1"), "not_found"),
            (.alreadyExists(.order, id: "o1"), "already_exists"),
            (.emailTaken, "email_taken"),
            (.productNotAvailable(productId: "pr1"), "product_not_available"),
            (.insufficientStock(productId: "pr1", requested: 3, available: 2), "insufficient_stock"),
        ]
        for (error, code) in cases {
            #expect(error.code == code)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func messagesNameWhatWentWrong() {
        #expect(
            DomainError.invalidInput(field: "price", reason: "must be positive").message == "price: must be positive")
        #expect(DomainError.notFound(.post, id: "p1").message == "post 'p1' does not exist")
        #expect(DomainError.alreadyExists(.product, id: "pr1").message == "product 'pr1' already exists")
        #expect(!DomainError.emailTaken.message.contains("@"))
        #expect(DomainError.insufficientStock(productId: "pr1", requested: 3, available: 2).message.contains("2"))
    }

    @Test func detailsAreForPrograms() {
        func flat(_ error: DomainError) -> [String] { error.details.map { "\($0.key)=\($0.value)" } }
        #expect(flat(.invalidInput(field: "data", reason: "r")) == ["field=string(\"data\")"])
        #expect(flat(.notFound(.user, id: "u1")) == ["entity=string(\"user\")", "id=string(\"u1\")"])
        #expect(flat(.alreadyExists(.order, id: "o1")) == ["entity=string(\"order\")", "id=string(\"o1\")"])
        #expect(flat(.emailTaken) == ["field=string(\"email\")"])
        #expect(flat(.productNotAvailable(productId: "pr1")) == ["productId=string(\"pr1\")", "available=int(0)"])
        #expect(
            flat(.insufficientStock(productId: "pr1", requested: 3, available: 2))
                == ["productId=string(\"pr1\")", "requested=int(3)", "available=int(2)"])
    }
}
