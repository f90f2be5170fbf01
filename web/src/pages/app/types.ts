/**
 * The shapes of the deploy manager's answers this page and the new-app wizard read: generated from the deploy API's
 * schemas (specs/deploy/schemas/, web/src/api-types.ts), which the tests check every answer against.
 */
import type { components } from '../../api-types.ts';

type Schemas = components['schemas'];

export type FindingLevel = Schemas['FindingLevel'];
export type Finding = Schemas['Finding'];
export type FileCheck = Schemas['FileCheck'];
export type EvidenceLevel = Schemas['EvidenceLevel'];
export type EvidenceSource = Schemas['EvidenceSource'];
export type OptionSection = Schemas['MethodOption']['section'];
export type MethodNeed = Schemas['MethodNeed'];
export type RecipeChanges = Schemas['RecipeChanges'];
export type MethodOption = Schemas['MethodOption'];
export type SignInCheck = Schemas['SignInCheck'];
export type Identity = Schemas['Identity'];
export type AccessGroup = Schemas['AccessGroup'];
export type AppAccess = Schemas['AppAccess'];
export type Draft = Schemas['Draft'];
export type AppState = Schemas['App']['state'];
export type App = Schemas['App'];
export type AvailabilityCheck = Schemas['AvailabilityCheck'];
export type Availability = Schemas['Availability'];
export type PlanAction = Schemas['PlanAction'];
export type AppFile = Schemas['AppFile'];
export type Preview = Schemas['Preview'];
export type RunState = Schemas['RunState'];
export type Run = Schemas['Run'];
export type RunLine = Schemas['RunLine'];
export type ContainerStatus = Schemas['ContainerStatus'];
export type Probe = Schemas['Probe'];
export type FollowedLine = Schemas['FollowedLine'];
export type CertificateInfo = Schemas['CertificateInfo'];
export type AppStatus = Schemas['AppStatus'];
export type DirectoryUser = Schemas['DirectoryUser'];
export type DirectoryGroup = Schemas['DirectoryGroup'];
export type Directory = Schemas['Directory'];
export type RunStarted = Schemas['RunStarted'];
export type Backup = Schemas['Backup'];
export type BackupList = Schemas['BackupList'];
export type BackupSchedule = Schemas['BackupSchedule'];
export type ImageUpdate = Schemas['ImageUpdate'];
export type AppUpdates = Schemas['AppUpdates'];
export type KnownUpdateList = Schemas['KnownUpdateList'];
export type TerminalState = Schemas['TerminalState'];
export type TerminalTicket = Schemas['TerminalTicket'];
