/// The checks ``ResponseValidation`` runs on this request's response; a ``Client`` sets it
/// for every endpoint request.
public enum ResponseValidationAttribute: RequestAttributeKey {
  /// No checks inside the chain.
  public static let defaultValue: ResponseValidationPlan? = nil
}
