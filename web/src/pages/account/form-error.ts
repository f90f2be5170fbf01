import { ApiError } from '../../api.ts';

/** An error of a form: the field it concerns (when the API named one), else the form's action. */
export interface FormError {
    field: string | undefined;
    message: string;
}

/**
 * The API names the field first ("email: not a valid e-mail address", "newPassword is not allowed to be empty"),
 * so the message can be shown next to that field; anything else goes next to the action.
 */
export function formError(failure: unknown, fields: readonly string[]): FormError {
    const message = failure instanceof ApiError || failure instanceof Error ? failure.message : String(failure);
    const field = fields.find((name) => message.startsWith(`${name}:`) || message.startsWith(`${name} `));
    return { field, message };
}

/** The message for `field`, or for the action when `field` is undefined. */
export function errorFor(error: FormError | undefined, field?: string): string | undefined {
    return error && error.field === field ? error.message : undefined;
}
