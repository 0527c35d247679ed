/**
 * The hosted checkout page's script (`/assets/checkout.js`): checks the card form field by field
 * (errors shown beside each field and announced), tokenizes the card and pays the invoice with the
 * public key through `payments.ts` (3-D Secure in a modal frame), then goes to the invoice's
 * `return_url`, or shows the result. The page (`shared/checkout/page.ts`) gives it the project id,
 * the invoice id and the return URL in `data-` attributes of its form.
 */
import { PaymentError, Payments } from "./payments.ts";

type FieldName = "name" | "number" | "expiry" | "cvc";

const form = document.querySelector<HTMLFormElement>("form#pay");
if (form) setUp(form);

function setUp(form: HTMLFormElement) {
  const { projectId = "", invoiceId = "", returnUrl = "", apiUrl = "" } = form.dataset;
  const payments = new Payments(projectId, { apiUrl });
  const field = (name: FieldName) => form.elements.namedItem(name) as HTMLInputElement;
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]") as HTMLButtonElement;
  const status = document.getElementById("status") as HTMLElement;
  const failure = document.getElementById("failure") as HTMLElement;

  field("number").addEventListener("input", () => {
    const input = field("number");
    input.value = groupDigits(input.value);
  });
  field("expiry").addEventListener("input", () => {
    const input = field("expiry");
    input.value = expiryText(input.value);
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showFailure(failure, "");
    const problems = check({
      name: field("name").value,
      number: field("number").value,
      expiry: field("expiry").value,
      cvc: field("cvc").value,
    });
    for (const name of ["name", "number", "expiry", "cvc"] as const)
      showFieldError(field(name), problems[name]);
    const firstWrong = (["name", "number", "expiry", "cvc"] as const).find((name) => problems[name]);
    if (firstWrong) {
      field(firstWrong).focus();
      return;
    }

    button.disabled = true;
    status.textContent = "Processing your payment…";
    try {
      const [month = "", year = ""] = field("expiry")
        .value.split("/")
        .map((part) => part.trim());
      const card = await payments.tokenizeCard({
        number: field("number").value,
        exp_month: month,
        exp_year: year,
        cvc: field("cvc").value,
        name: field("name").value.trim(),
      });
      await payments.makeCardPayment(invoiceId, card.id);
    } catch (error) {
      status.textContent = "";
      const refusal =
        error instanceof PaymentError ? error : new PaymentError("payments.error", "Something went wrong.");
      if (refusal.code.startsWith("card.invalid")) {
        button.disabled = false;
        showFieldError(field("number"), refusal.message);
        field("number").focus();
        return;
      }
      // A decline is the invoice's one payment's outcome: trying again, even with another card, cannot pay it.
      const declined = isDecline(refusal);
      button.disabled = declined;
      showFailure(
        failure,
        declined
          ? `${failureText(refusal)} This payment cannot be tried again: ask the merchant for a new payment link.`
          : failureText(refusal),
      );
      return;
    }
    if (returnUrl) {
      status.textContent = "Payment received. Taking you back to the merchant…";
      window.location.assign(returnUrl);
      return;
    }
    showPaid();
  });
}

/** The result in place of the form, focused so that it is read out. */
function showPaid() {
  const result = document.getElementById("paid") as HTMLElement;
  document.getElementById("pay")?.remove();
  result.hidden = false;
  result.querySelector("h2")?.focus();
}

function isDecline(refusal: PaymentError): boolean {
  return (
    (refusal.code.startsWith("card.") || refusal.code.startsWith("gateway.")) &&
    refusal.code !== "gateway.timeout"
  );
}

function failureText(refusal: PaymentError): string {
  if (refusal.code === "customer.canceled") return "The verification was canceled: the payment was not made.";
  if (refusal.code === "card.failed-three-d-s") return "Your bank did not confirm the payment.";
  return refusal.message;
}

function showFailure(region: HTMLElement, text: string) {
  region.textContent = text;
  region.hidden = text === "";
}

function showFieldError(input: HTMLInputElement, problem: string | undefined) {
  const error = document.getElementById(`${input.name}-error`) as HTMLElement;
  error.textContent = problem ?? "";
  error.hidden = !problem;
  if (problem) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}

/** What is wrong with each field, in the words shown beside it. */
function check(values: Record<FieldName, string>, now = new Date()): Partial<Record<FieldName, string>> {
  const problems: Partial<Record<FieldName, string>> = {};
  if (values.name.trim() === "") problems.name = "Enter the name on the card.";
  const digits = values.number.replace(/[\s-]/g, "");
  if (digits === "") problems.number = "Enter the card number.";
  else if (!/^\d{12,19}$/.test(digits) || !luhn(digits)) problems.number = "This card number is not valid.";
  const expiry = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(values.expiry.trim());
  if (values.expiry.trim() === "") problems.expiry = "Enter the expiry date, as MM/YY.";
  else if (!expiry) problems.expiry = "Write the expiry date as MM/YY.";
  else {
    const month = Number(expiry[1]);
    const year = Number(expiry[2]) + ((expiry[2] as string).length === 2 ? 2000 : 0);
    if (month < 1 || month > 12) problems.expiry = "The month must be 01 to 12.";
    else if (year * 12 + month < now.getFullYear() * 12 + now.getMonth() + 1)
      problems.expiry = "This card has expired.";
  }
  if (values.cvc === "") problems.cvc = "Enter the security code.";
  else if (!/^\d{3,4}$/.test(values.cvc)) problems.cvc = "The security code is 3 or 4 digits.";
  return problems;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** `4242424242424242` → `4242 4242 4242 4242`, as it is written on the card. */
function groupDigits(text: string): string {
  return text
    .replace(/\D/g, "")
    .slice(0, 19)
    .replace(/(\d{4})(?=\d)/g, "$1 ");
}

/** `1230` → `12/30`: the slash comes by itself. */
function expiryText(text: string): string {
  const digits = text.replace(/\D/g, "").slice(0, 4);
  return digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
}
