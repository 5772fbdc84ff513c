// What a code partition finds per class: the scan's output, the encoder's and the final merge's input.
import type { MethodTimes } from '../../../storage/records.ts';

/** The methods of one class that passed the filter and the window, merged across AppEnvs. */
export interface ClassMethods extends MethodTimes {
  sourceName: string;
  className: string;
}
