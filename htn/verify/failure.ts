/**
 * The verifier's internal "first problem found" signal. Thrown deep inside a check and turned into
 * a `{ ok: false, ... }` result at the `verifyPlan` boundary — it never escapes the verifier.
 */
export class VerifyFailure extends Error {
  constructor(
    message: string,
    readonly where: { readonly id?: number; readonly line?: number } = {},
  ) {
    super(message);
    this.name = 'VerifyFailure';
  }
}
