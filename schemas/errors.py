"""MySQL error codes Strata answers with, shared by the sequencer (rejections) and the SQL server."""

from enum import IntEnum


class ErrorCode(IntEnum):
    DB_CREATE_EXISTS = 1007
    DB_DROP_EXISTS = 1008
    NO_DB_ERROR = 1046
    BAD_DB_ERROR = 1049
    TABLE_EXISTS_ERROR = 1050
    BAD_FIELD_ERROR = 1054
    NON_UNIQ_ERROR = 1052  # an ambiguous column name
    SP_DOES_NOT_EXIST = 1305  # an unknown function
    UNKNOWN_COLLATION = 1273
    DUP_FIELDNAME = 1060
    PARSE_ERROR = 1064
    WRONG_VALUE_COUNT = 1136
    NO_SUCH_TABLE = 1146
    WRONG_OBJECT = 1347  # DROP TABLE of a view, DROP VIEW of a table
    VIEW_WRONG_LIST = 1353  # a view's column list and its query's columns differ in number
    VIEW_RECURSIVE = 1462  # a view that reads itself
    NOT_SUPPORTED_YET = 1235
    TRUNCATED_WRONG_VALUE = 1292
    WRONG_ARGUMENTS = 1210
    UNKNOWN_PARTITION = 1735
    SAME_NAME_PARTITION = 1517
    NO_PARTITION_FOR_GIVEN_VALUE = 1526
    BAD_NULL_ERROR = 1048
    DATA_OUT_OF_RANGE = 1264
    WRONG_VALUE = 1525
    UNKNOWN_ERROR = 1105
    LOCK_WAIT_TIMEOUT = 1205
    CANNOT_USER = 1396
    ACCESS_DENIED = 1045
    TABLE_ACCESS_DENIED = 1142
    DB_ACCESS_DENIED = 1044
    SPECIFIC_ACCESS_DENIED = 1227
    # Resource controls and login (query.processlist, query.login_policy, query.identifiers).
    NO_SUCH_THREAD = 1094
    KILL_DENIED = 1095
    WRONG_DB_NAME = 1102
    WRONG_TABLE_NAME = 1103
    WRONG_COLUMN_NAME = 1166
    TOO_MANY_USER_CONNECTIONS = 1203
    QUERY_INTERRUPTED = 1317
    QUERY_TIMEOUT = 3024
    ACCOUNT_LOCKED = 3955
    WRONG_VALUE_FOR_VAR = 1231
    WRONG_PARTITION_NAME = 1567
    TABLE_NAME_LENGTH_LIMIT = 5089  # Doris' ERR_TABLE_NAME_LENGTH_LIMIT
    WRONG_NAME_FORMAT = 5063  # Doris' ERR_WRONG_NAME_FORMAT ("Incorrect %s name '%s'")
    # The MySQL protocol layer (query.wire): malformed or oversized packets, unknown commands and statements.
    HANDSHAKE_ERROR = 1043
    UNKNOWN_COM_ERROR = 1047
    NET_PACKET_TOO_LARGE = 1153
    NET_PACKETS_OUT_OF_ORDER = 1156
    NET_READ_INTERRUPTED = 1159
    UNKNOWN_STMT_HANDLER = 1243
    MAX_PREPARED_STMT_COUNT_REACHED = 1461
    MALFORMED_PACKET = 1835
    # Session values (query.session_functions).
    UNKNOWN_SYSTEM_VARIABLE = 1193
    TOO_BIG_PRECISION = 1426
    WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582
    INCORRECT_GLOBAL_LOCAL_VAR = 1238  # SET of a read-only variable
    LABEL_ALREADY_EXISTS = 5001
    CONFLICT = 5002
