# SPDX-License-Identifier: LGPL-2.1-or-later
from typing import Any, Mapping, Optional, Sequence, Union

from ._errors import (BrokerUnavailableError as BrokerUnavailableError, BusyError as BusyError,
                      CallTimeoutError as CallTimeoutError, ChipGoneError as ChipGoneError,
                      ConnectionLostError as ConnectionLostError,
                      NoFdPassingError as NoFdPassingError,
                      Error as Error, InvalidArgsError as InvalidArgsError,
                      LimitsExceededError as LimitsExceededError, NotFoundError as NotFoundError,
                      NotOutputError as NotOutputError,
                      PermissionDeniedError as PermissionDeniedError,
                      PolicyInvalidError as PolicyInvalidError)
from ._gpiobroker import Event as Event, LineInfoWatch as LineInfoWatch, Request as Request
from ._gpiobroker import Watch as Watch, _Broker, library_version as library_version

__version__: str

class Broker(_Broker):
    def request(self, line: str, *, label: Optional[str] = ..., output: Optional[bool] = ...,
                direction: Optional[str] = ..., value: Optional[bool] = ..., edge: Optional[str] = ...,
                bias: Optional[str] = ..., drive: Optional[str] = ..., active_low: Optional[bool] = ...,
                debounce_us: Optional[int] = ..., event_clock: Optional[str] = ...,
                persistent: bool = ..., direct: Union[bool, str] = ...) -> Request: ...
    def request_array(self, lines: Sequence[str], *, label: Optional[str] = ...,
                      settings: Optional[Sequence[Mapping[str, Any]]] = ..., persistent: bool = ...,
                      direct: Union[bool, str] = ...,
                      value: Union[None, bool, Sequence[bool]] = ..., **common: Any) -> Request: ...

def default_broker() -> Broker: ...
def request(line: str, **kwargs: Any) -> Request: ...
def request_array(lines: Sequence[str], **kwargs: Any) -> Request: ...
def watch(line: str) -> Watch: ...
def line_info(line: str) -> dict[str, Any]: ...
async def wait_event(obj: Union[Request, Watch], timeout: Optional[float] = ...) -> Optional[Event]: ...
