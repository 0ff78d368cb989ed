"""The JSON a Stream Load answers with, in Doris' field names and order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUCCESS = "Success"
FAIL = "Fail"
LABEL_EXISTS = "Label Already Exists"


@dataclass
class LoadReply:
    label: str
    status: str = SUCCESS
    message: str = "OK"
    txn_id: int = -1
    two_phase_commit: bool = False
    existing_job_status: str | None = None  # with LABEL_EXISTS: RUNNING (prepared) or FINISHED
    total_rows: int = 0
    loaded_rows: int = 0
    filtered_rows: int = 0
    unselected_rows: int = 0
    load_bytes: int = 0
    load_time_ms: int = 0
    error_url: str | None = None
    comment: str = ""
    group_commit: bool = False  # the rows joined a group commit batch (the Label is the batch's)

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"TxnId": self.txn_id, "Label": self.label, "Comment": self.comment,
                                "TwoPhaseCommit": "true" if self.two_phase_commit else "false",
                                "Status": self.status}
        if self.group_commit:
            body["GroupCommit"] = True
        if self.existing_job_status is not None:
            body["ExistingJobStatus"] = self.existing_job_status
        body.update({"Message": self.message, "NumberTotalRows": self.total_rows,
                     "NumberLoadedRows": self.loaded_rows, "NumberFilteredRows": self.filtered_rows,
                     "NumberUnselectedRows": self.unselected_rows, "LoadBytes": self.load_bytes,
                     "LoadTimeMs": self.load_time_ms, "BeginTxnTimeMs": 0, "StreamLoadPutTimeMs": 0,
                     "ReadDataTimeMs": 0, "WriteDataTimeMs": 0, "CommitAndPublishTimeMs": 0})
        if self.error_url is not None:
            body["ErrorURL"] = self.error_url
        return body


def failed(label: str, message: str, **fields: Any) -> LoadReply:
    return LoadReply(label=label, status=FAIL, message=message, **fields)
