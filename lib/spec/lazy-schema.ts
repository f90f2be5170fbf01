import type Joi from 'joi';

/**
 * A schema that is built when first used. hapi takes any object with a `validate` method as a schema and calls its
 * `validateAsync`; `describe` answers as the schema's own, for whoever lists a route's fields.
 */
export function builtOnFirstUse<Schema extends Joi.Schema>(build: () => Schema): Schema {
    let schema: Schema | undefined;
    const built = () => (schema ??= build());
    const lazy: Pick<Joi.Schema, 'validate' | 'validateAsync' | 'describe'> = {
        validate: (value, options) => built().validate(value, options),
        validateAsync: (value, options) => built().validateAsync(value, options),
        describe: () => built().describe(),
    };
    // Only these three are ever called on a route's schema (by hapi, and by the tests that list fields).
    return lazy as Schema;
}
