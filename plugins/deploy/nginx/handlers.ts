import type { Lifecycle } from '@hapi/hapi';

import { ValidationError } from '../../../lib/errors.ts';
import { checkSite, type Finding, parseSite, renderSite, type SiteSpec, validateSiteText } from './site-model.ts';

interface SitePayload {
    text?: string;
    spec?: SiteSpec;
}

/** A model error names its field inside the request body: `spec.locations[0].proxyPass: ...`. */
function withinSpec<T>(work: () => T): T {
    try {
        return work();
    } catch (error) {
        if (error instanceof ValidationError) {
            throw new ValidationError(`spec.${error.message}`);
        }

        throw error;
    }
}

function specFindings(spec: SiteSpec): Finding[] {
    return checkSite(spec).map((finding) => ({ ...finding, path: finding.path ? `spec.${finding.path}` : 'spec' }));
}

/**
 * The model's findings on text that reads, as lint only: for text, nginx is the judge, and what the model
 * cannot express is kept as written. A syntax error is left to nginx, which names its line.
 */
function textFindings(text: string): Finding[] {
    try {
        const findings = checkSite(parseSite(text).spec);
        return findings.map((finding) => ({ ...finding, level: finding.level === 'error' ? 'warning' : finding.level }));
    } catch (error) {
        if (error instanceof ValidationError) {
            return [];
        }

        throw error;
    }
}

export const parseNginx: Lifecycle.Method = (request) => parseSite((request.payload as Required<Pick<SitePayload, 'text'>>).text);

export const renderNginx: Lifecycle.Method = (request) => {
    const { spec } = request.payload as Required<Pick<SitePayload, 'spec'>>;
    return { text: withinSpec(() => renderSite(spec)) };
};

export const validateNginx: Lifecycle.Method = async (request) => {
    const { text, spec } = request.payload as SitePayload;
    if ((text === undefined) === (spec === undefined)) {
        throw new ValidationError('give either text or spec');
    }

    const findings = spec ? specFindings(spec) : textFindings(text ?? '');
    const modelErrors = findings.filter((finding) => finding.level === 'error');
    const lint = findings.filter((finding) => finding.level !== 'error');
    if (spec && modelErrors.length > 0) {
        return { ok: false, errors: modelErrors, lint };
    }

    const tested = await validateSiteText(text ?? renderSite(spec as SiteSpec));
    const errors = [...tested.errors, ...modelErrors];
    return { ok: errors.length === 0, errors, lint: [...tested.warnings, ...lint] };
};
