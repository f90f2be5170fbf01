import type { Lifecycle, Request } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import type { Finding } from '../../domain/findings/finding.ts';
import {
    checkSite,
    checkSiteText,
    readSite,
    renderSite,
    type SitePlaces,
    sitePlaces,
    type SiteSpec,
    validateSiteText,
} from '../../domain/nginx/site-model.ts';

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

function specFindings(spec: SiteSpec, places: SitePlaces): Finding[] {
    return checkSite(spec, places).map((finding) => ({ ...finding, path: finding.path ? `spec.${finding.path}` : 'spec' }));
}

/** No app is named: the places of any app's site (every app folder, every managed certificate). */
const placesOf = (request: Request): SitePlaces => sitePlaces(request.server.app.config);

/** Reading text into the model touches nothing: what the text would make nginx reach is for validate to judge. */
export const parseNginx: Lifecycle.Method = (request) => readSite((request.payload as Required<Pick<SitePayload, 'text'>>).text);

export const renderNginx: Lifecycle.Method = (request) => {
    const { spec } = request.payload as Required<Pick<SitePayload, 'spec'>>;
    return { text: withinSpec(() => renderSite(spec)) };
};

export const validateNginx: Lifecycle.Method = async (request) => {
    const { text, spec } = request.payload as SitePayload;
    if ((text === undefined) === (spec === undefined)) {
        throw new ValidationError('give either text or spec');
    }

    const places = placesOf(request);
    const findings = spec ? specFindings(spec, places) : checkSiteText(text ?? '', places);
    const modelErrors = findings.filter((finding) => finding.level === 'error');
    const lint = findings.filter((finding) => finding.level !== 'error');
    if (spec && modelErrors.length > 0) {
        return { ok: false, errors: modelErrors, lint };
    }

    const nginxBin = request.server.app.config.host.nginxBin;
    const tested = await validateSiteText(text ?? renderSite(spec as SiteSpec), { nginxBin, places });
    const errors = [...tested.errors, ...modelErrors];
    return { ok: errors.length === 0, errors, lint: [...tested.warnings, ...lint] };
};
